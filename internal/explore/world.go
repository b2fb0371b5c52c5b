package explore

import (
	"context"
	"fmt"
	"io"
	"path"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// World is one namespace of a release's API server in which generated
// volumes are written while nothing of Longhorn runs, then Longhorn's own
// controllers and lhsim's instance layer are started on all of them at
// once.
type World struct {
	Release string
	NS      string
	c       *testcluster.Cluster
	sim     *lhsim.Sim
	lh      *lhreal.Controllers
	img     Images
	logs    io.Writer
	// simOracle: lhsim plays Longhorn's controllers too (full mode), for
	// releases without real ones and for trying the explorer without
	// building them.
	simOracle bool

	mu        sync.Mutex
	deleted   map[string]deletion // first state seen with a deletionTimestamp
	generated map[string]bool     // replicas the state itself had deleting
	stopWatch func()
}

// NewWorld prepares a namespace: nodes, instance managers, settings, the
// default and the old engine image. Nothing runs yet.
func NewWorld(ctx context.Context, c *testcluster.Cluster, release string, logs io.Writer, simOracle bool) (*World, error) {
	w := &World{Release: release, NS: testenv.Namespace("explore"), c: c, logs: logs, simOracle: simOracle,
		deleted: map[string]deletion{}, generated: map[string]bool{}}
	s, err := lhsim.New(c.RESTConfig(), lhsim.Options{Namespace: w.NS, Version: release, InstanceOnly: !simOracle})
	if err != nil {
		return nil, err
	}
	w.sim = s
	w.img = Images{Default: s.EngineImage()}
	for _, n := range Nodes {
		if err := s.AddNode(ctx, n, lhsim.NodeOptions{}); err != nil {
			return nil, err
		}
	}
	for _, img := range []string{s.EngineImage(), OldImage} {
		if err := s.DeployEngineImage(ctx, img); err != nil {
			return nil, err
		}
	}
	settings := map[string]string{
		"default-engine-image":           s.EngineImage(),
		"default-instance-manager-image": s.InstanceManagerImage(),
		longhorn.VersionSetting:          release,
	}
	for name, value := range settings {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": longhorn.APIVersion, "kind": longhorn.Settings.Kind,
			"metadata": map[string]any{"name": name, "namespace": w.NS}, "value": value,
		}}
		if _, err := c.Dynamic().Resource(longhorn.Settings.GVR()).Namespace(w.NS).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("explore: setting %s: %w", name, err)
		}
	}
	return w, nil
}

// Write creates the objects of s as volume vol.
func (w *World) Write(ctx context.Context, s State, vol string) error {
	b := Build(s, vol, w.img)
	err := b.Objects.Each(func(kind string, obj any) error {
		u, err := testenv.Unstructured(kind, obj)
		if err != nil {
			return err
		}
		u.SetNamespace(w.NS)
		Overlay(s, kind, u, w.img)
		if kind == longhorn.Volumes.Kind {
			u.SetFinalizers([]string{longhorn.Finalizer})
		}
		ri := w.c.Dynamic().Resource(resourceOf(kind).GVR()).Namespace(w.NS)
		if _, err := testcluster.CreateWithStatus(ctx, ri, u, true); err != nil {
			return fmt.Errorf("explore: create %s %s: %w", kind, u.GetName(), err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.mu.Lock()
	for n := range b.GeneratedDeleted {
		w.generated[n] = true
	}
	w.mu.Unlock()
	for _, name := range b.Objects.Deleting {
		if err := w.delete(ctx, longhorn.Engines, name); err != nil {
			return err
		}
	}
	for _, name := range b.DeletingReplica {
		if err := w.delete(ctx, longhorn.Replicas, name); err != nil {
			return err
		}
	}
	return nil
}

func (w *World) delete(ctx context.Context, r longhorn.Resource, name string) error {
	err := w.c.Dynamic().Resource(r.GVR()).Namespace(w.NS).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil {
		return fmt.Errorf("explore: delete %s %s: %w", r.Kind, name, err)
	}
	return nil
}

func resourceOf(kind string) longhorn.Resource {
	for _, r := range []longhorn.Resource{longhorn.Volumes, longhorn.Engines, longhorn.Replicas, longhorn.VolumeAttachments, longhorn.Nodes, longhorn.Settings} {
		if r.Kind == kind {
			return r
		}
	}
	panic("explore: no resource of kind " + kind)
}

// Start starts the replica-deletion watch, lhsim's instance layer and the
// release's controllers.
func (w *World) Start(ctx context.Context) error {
	if err := w.watchDeletions(ctx); err != nil {
		return err
	}
	if err := w.sim.Start(ctx); err != nil {
		return err
	}
	if w.simOracle {
		return nil
	}
	lh, err := lhreal.Start(ctx, lhreal.Options{Release: w.Release, Kubeconfig: w.c.KubeconfigPath(), Namespace: w.NS, Nodes: Nodes, LogWriter: w.logs})
	if err != nil {
		return err
	}
	w.lh = lh
	return nil
}

// conflictOn answers 409 to the controllers' first update of each replica
// named, per volume (Options.Conflicts); it returns the faults' ids.
func (w *World) conflictOn(replicas map[string][]string) (map[string][]int, error) {
	ids := map[string][]int{}
	for vol, names := range replicas {
		for _, name := range names {
			id, err := w.lh.InjectFault(lhreal.Fault{Verb: "update", Resource: "replicas", Name: name, Count: 1, Code: 409})
			if err != nil {
				return nil, err
			}
			ids[vol] = append(ids[vol], id)
		}
	}
	return ids, nil
}

// Stop stops what Start started.
func (w *World) Stop() {
	if w.lh != nil {
		w.lh.Stop()
	}
	w.sim.Stop()
	if w.stopWatch != nil {
		w.stopWatch()
	}
}

// Logs is the controllers' log.
func (w *World) Logs() string {
	if w.lh == nil {
		return ""
	}
	return w.lh.Logs()
}

// watchDeletions records each replica's state when its deletion was first
// seen: the replica controller acts on spec.active then.
func (w *World) watchDeletions(ctx context.Context) error {
	wi, err := w.c.Dynamic().Resource(longhorn.Replicas.GVR()).Namespace(w.NS).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	w.stopWatch = wi.Stop
	go func() {
		for ev := range wi.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || (ev.Type != watch.Deleted && u.GetDeletionTimestamp() == nil) {
				continue
			}
			var r longhorn.Replica
			if testenv.FromUnstructured(u, &r) != nil {
				continue
			}
			w.mu.Lock()
			_, seen := w.deleted[r.Name]
			w.mu.Unlock()
			if seen {
				continue
			}
			d := deletion{Replica: r, redundant: w.redundant(ctx, &r)}
			w.mu.Lock()
			w.deleted[r.Name] = d
			w.mu.Unlock()
		}
	}()
	return nil
}

// deletion is a replica as first seen deleting, and whether the volume
// kept its redundancy without it then.
type deletion struct {
	longhorn.Replica
	redundant bool
}

// redundant reports whether, as r's deletion is seen, the volume's active
// engines still have spec.numberOfReplicas replicas in RW mode on data
// directories other than r's. That is when Longhorn removes an extra
// healthy replica (cleanupExtraHealthyReplicas: data locality best-effort
// after a local rebuild, replica auto-balance): the volume keeps its data
// and every copy it asks for, so the removal is no loss (finding E11).
func (w *World) redundant(ctx context.Context, r *longhorn.Replica) bool {
	// the simulator's cache: a live read per deletion listed the whole
	// namespace each time
	v, es, rs, err := w.sim.CachedState(ctx, r.Spec.VolumeName)
	if err != nil || v == nil || v.Spec.NumberOfReplicas < 1 {
		return false
	}
	dirOf := map[string]string{}
	for i := range rs {
		if rs[i].Spec.Active && rs[i].DeletionTimestamp == nil {
			dirOf[rs[i].Name] = dirKey(&rs[i])
		}
	}
	dirs := map[string]bool{}
	for _, e := range es {
		if !e.Spec.Active || e.DeletionTimestamp != nil {
			continue
		}
		for name, mode := range e.Status.ReplicaModeMap {
			if d, ok := dirOf[name]; ok && mode == longhorn.ModeRW && name != r.Name && d != dirKey(r) {
				dirs[d] = true
			}
		}
	}
	return len(dirs) >= v.Spec.NumberOfReplicas
}

// lossy reports whether d is a deletion that may have lost data: a
// replica deleted while active, not failed (removing a failed replica
// after the stale-replica timeout is Longhorn's normal clean-up, its data
// is not the volume's), not generated deleting, and not redundant.
func (w *World) lossy(name string, d deletion) bool {
	return d.Spec.Active && d.Spec.FailedAt == "" && !w.generated[name] && !d.redundant
}

// activeDeleted lists vol's replicas the controllers deleted while active
// (placed on a disk: an unscheduled replica holds no data) and lossy.
func (w *World) activeDeleted(vol string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for name, d := range w.deleted {
		if d.Spec.VolumeName == vol && w.lossy(name, d) && d.Spec.NodeID != "" && d.Spec.DiskID != "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// lostDirs are vol's wiped data directories that held the volume's data:
// a lossy deletion's replica used it, or a replica still present uses it.
// A failed or redundant replica's directory wiped with it is not counted
// (see lossy).
func (w *World) lostDirs(vol string, remaining []longhorn.Replica) []string {
	used := map[string]bool{}
	for _, r := range remaining {
		used[dirKey(&r)] = true
	}
	w.mu.Lock()
	for name, d := range w.deleted {
		if d.Spec.VolumeName == vol && w.lossy(name, d) {
			used[dirKey(&d.Replica)] = true
		}
	}
	w.mu.Unlock()
	var out []string
	for _, d := range w.sim.WipedDirs(vol) {
		if used[d] {
			out = append(out, d)
		}
	}
	return out
}

// dirKey is lhsim's name of a replica's data directory (WipedDirs).
func dirKey(r *longhorn.Replica) string {
	return r.Spec.NodeID + ":" + path.Join(r.Spec.DiskPath, "replicas", r.Spec.DataDirectoryName)
}

// Quiesce waits until no Volume, Engine or Replica of the namespace has
// changed for quiet, or max has passed: Longhorn's controllers and the
// instance layer have done what they will do from these states. A volume
// whose objects have kept changing for churn without a quiet gap (a
// migration engine Longhorn restarts for ever, a directory cloned again
// and again) is not waited for past that: every other volume quiet, the
// wait ends there rather than at max, and churn <= 0 waits up to max as
// before. It reports whether every volume was quiet and, when not, the
// volumes still changing. Changes are the simulator's informer events
// (lhsim.Sim.ChangedSince): listing every object of the namespace at each
// tick was most of a batch's CPU.
func (w *World) Quiesce(ctx context.Context, quiet, churn, max time.Duration) (bool, []string) {
	start := time.Now()
	deadline := start.Add(max)
	if churn <= 0 {
		churn = max
	}
	type activity struct{ last, busySince time.Time }
	vols := map[string]*activity{}
	_, mark := w.sim.ChangedSince(0)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		now := time.Now()
		var changed []string
		changed, mark = w.sim.ChangedSince(mark)
		for _, vol := range changed {
			a := vols[vol]
			if a == nil {
				a = &activity{busySince: now}
				vols[vol] = a
			} else if now.Sub(a.last) >= quiet {
				a.busySince = now
			}
			a.last = now
		}
		settled := now.Sub(start) >= quiet
		var busy []string
		for _, vol := range longhorn.SortedKeys(vols) {
			a := vols[vol]
			if now.Sub(a.last) >= quiet {
				continue
			}
			busy = append(busy, vol)
			if now.Sub(a.busySince) < churn {
				settled = false
			}
		}
		if settled || !now.Before(deadline) {
			return len(busy) == 0, busy
		}
		select {
		case <-ctx.Done():
			return false, busy
		case <-tick.C:
		}
	}
}

// State reads vol's objects.
func (w *World) State(ctx context.Context, vol string) (*longhorn.Volume, []longhorn.Engine, []longhorn.Replica, error) {
	return w.sim.State(ctx, vol)
}

// Wiped lists vol's wiped data directories.
func (w *World) Wiped(vol string) []string { return w.sim.WipedDirs(vol) }

// Kubeconfig is the API server's.
func (w *World) Kubeconfig() string { return w.c.KubeconfigPath() }
