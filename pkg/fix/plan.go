package fix

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// Plan is what fix intends to do, volume by volume, from one fresh read.
type Plan struct {
	Namespace string
	Version   longhorn.Version
	Strategy  Strategy
	Volumes   []Planned
}

// Acting returns the volumes the plan changes.
func (p *Plan) Acting() []Planned {
	var out []Planned
	for _, v := range p.Volumes {
		if v.Acts() {
			out = append(out, v)
		}
	}
	return out
}

// Planned is the decision for one volume together with the identity and
// version of every object it rests on, so the re-check right before acting
// can tell whether anything moved.
type Planned struct {
	Volume  string
	Version longhorn.Version
	// Finding is detect's finding; nil for a healthy volume.
	Finding *detect.Finding
	// Action is what fix does: deactivate, delete or none.
	Action detect.Action
	// Why explains Action in one or two sentences.
	Why   string
	Keep  EngineRef
	Stale []EngineRef
	// Replicas are written first, in order; the engine writes follow only
	// once a re-read shows every replica flag as planned.
	Replicas []ReplicaWrite
	// MigrationNodeID is the stale status.currentMigrationNodeID that
	// clear-migration-node clears (migrationnode.go); "" otherwise.
	MigrationNodeID string
	Snapshot        Snapshot
}

// Acts reports whether the plan writes to this volume.
func (p *Planned) Acts() bool { return p.Action.Writes() }

// pendingMigration is the node of a migration requested before the repair
// that Longhorn had not started (detect's Finding.PendingMigration).
func (p *Planned) pendingMigration() string {
	if p.Finding == nil {
		return ""
	}
	return p.Finding.PendingMigration()
}

// EngineWrites reports whether the plan changes engines after the replicas.
func (p *Planned) EngineWrites() bool {
	return p.Action == detect.ActionDeactivate || p.Action == detect.ActionDelete
}

// ReplicaWrite is one pinned replica change.
type ReplicaWrite struct {
	ReplicaRef
	ToEngine string
	ToActive bool
}

// EngineRef pins one engine (detect's, as the finding carries it): the
// server refuses a write whose UID or resourceVersion no longer match.
type EngineRef = detect.EngineRef

// ReplicaRef is a replica's identity and the flags the repair depends on.
type ReplicaRef = detect.ReplicaRef

// Snapshot is everything of a volume that must not change between the plan
// and the write: the objects detect classified. The survivor's
// resourceVersion is deliberately not compared: its status moves on its own
// while it serves I/O, and its preconditions are re-evaluated from the fresh
// read anyway.
type Snapshot = detect.Objects

// planState turns a state and its classification into a plan.
func planState(st *longhorn.State, res detect.Result, selected []string, s Strategy) *Plan {
	p := &Plan{Namespace: st.Namespace, Version: st.Version, Strategy: s}
	byVol := map[string]*detect.Finding{}
	for i := range res.Findings {
		byVol[res.Findings[i].Volume] = &res.Findings[i]
	}
	names := selected
	if len(names) == 0 {
		for i := range st.Volumes {
			names = append(names, st.Volumes[i].Name)
		}
	}
	names = append([]string(nil), names...)
	sort.Strings(names)
	names = dedupe(names)
	for _, n := range names {
		p.Volumes = append(p.Volumes, planVolume(st.Version, n, byVol[n], s))
	}
	return p
}

// planRead classifies and plans one volume of a state read for it (a
// re-read right before acting, or while waiting).
func planRead(st *longhorn.State, vol string, s Strategy, threshold time.Duration) Planned {
	f, ok := detect.ClassifyVolume(st, vol, detect.Options{PendingThreshold: threshold, SkipOrphans: true})
	if !ok {
		// The re-read is compared with the plan even when nothing is wrong.
		p := planVolume(st.Version, vol, nil, s)
		p.Snapshot = detect.ObjectsOf(st, vol)
		return p
	}
	return planVolume(st.Version, vol, &f, s)
}

// planVolume decides for one volume from detect's finding and the objects
// it pinned (none for a healthy volume). The same function plans from the
// first read and from the re-read right before acting, so the two are
// comparable field by field.
func planVolume(ver longhorn.Version, vol string, f *detect.Finding, s Strategy) Planned {
	p := Planned{Volume: vol, Version: ver, Action: detect.ActionNone}
	if f == nil {
		p.Why = "healthy: at most one active engine and no migration, nothing to do"
		return p
	}
	fc := *f
	p.Finding = &fc
	objs := fc.Objects
	p.Snapshot = objs
	p.Action, p.Why = chooseAction(fc, ver, s)
	if p.VolumeWrite() {
		// one write on the volume, pinned by its uid and resourceVersion
		p.MigrationNodeID = fc.Evidence.CurrentMigrationNodeID
		if objs.VolumeUID == "" || objs.VolumeResourceVersion == "" || p.MigrationNodeID == "" {
			p.Action, p.Why = detect.ActionNone, "internal check failed: the volume or the value to clear is unknown; no action"
		}
		return p
	}
	if fc.Keep != "" {
		p.Keep, _ = objs.Engine(fc.Keep)
		p.Keep.Name = fc.Keep
	}
	for _, name := range fc.Stale {
		r, _ := objs.Engine(name)
		r.Name = name
		p.Stale = append(p.Stale, r)
	}
	// Never plan a write on the survivor, whatever detect said.
	for _, r := range p.Stale {
		if r.Name == p.Keep.Name || r.UID == "" || r.UID == p.Keep.UID {
			p.Action, p.Why = detect.ActionNone, "internal check failed: a stale engine is the survivor or unknown; no action"
		}
	}
	if !p.Acts() {
		return p
	}
	if p.Keep.UID == "" {
		p.Action, p.Why = detect.ActionNone, "internal check failed: the engine to keep is unknown; no action"
		return p
	}
	for _, c := range fc.ReplicaChanges {
		r, ok := objs.Replica(c.Replica)
		if !ok || r.Deleting || r.EngineName != c.FromEngine || r.Active != c.FromActive {
			p.Action, p.Why, p.Replicas = detect.ActionNone, "internal check failed: a replica to change is unknown, being deleted or not as classified; no action", nil
			return p
		}
		p.Replicas = append(p.Replicas, ReplicaWrite{ReplicaRef: r, ToEngine: c.ToEngine, ToActive: c.ToActive})
	}
	if p.Action == detect.ActionSetReplicas && len(p.Replicas) == 0 {
		p.Action, p.Why = detect.ActionNone, "internal check failed: nothing to write; no action"
	}
	return p
}

// changedSince compares the plan with a plan made from a fresh read of the
// same volume. It returns "" when acting on the plan is still right, else the
// first difference, phrased for the user.
func changedSince(planned, fresh Planned) string {
	s0, s1 := planned.Snapshot, fresh.Snapshot
	switch {
	case s1.VolumeUID == "":
		return "the volume is gone"
	case s0.VolumeUID != s1.VolumeUID:
		return fmt.Sprintf("the volume was re-created (uid %s, was %s)", s1.VolumeUID, s0.VolumeUID)
	case s0.VolumeResourceVersion != s1.VolumeResourceVersion:
		return fmt.Sprintf("the volume changed (resourceVersion %s, was %s)", s1.VolumeResourceVersion, s0.VolumeResourceVersion)
	case planned.Version.String() != fresh.Version.String():
		return fmt.Sprintf("the Longhorn version changed (%s, was %s)", fresh.Version, planned.Version)
	}
	if d := diffEngines(s0.Engines, s1.Engines); d != "" {
		return d
	}
	if d := diffReplicas(s0.Replicas, s1.Replicas); d != "" {
		return d
	}
	staleRV := map[string]string{}
	for _, e := range planned.Stale {
		staleRV[e.Name] = e.ResourceVersion
	}
	for _, e := range s1.Engines {
		if rv, ok := staleRV[e.Name]; ok && rv != e.ResourceVersion {
			return fmt.Sprintf("engine %s changed (resourceVersion %s, was %s)", e.Name, e.ResourceVersion, rv)
		}
	}
	if fresh.Finding == nil {
		return "the volume is healthy now"
	}
	if fresh.Keep.Name != planned.Keep.Name {
		return fmt.Sprintf("the engine to keep is now %q (was %s)", fresh.Keep.Name, planned.Keep.Name)
	}
	if names(fresh.Stale) != names(planned.Stale) {
		return fmt.Sprintf("the stale engines are now %q (were %q)", names(fresh.Stale), names(planned.Stale))
	}
	if fresh.Action != planned.Action {
		return fmt.Sprintf("the action is now %s (was %s): %s", fresh.Action, planned.Action, fresh.Why)
	}
	if !fresh.Acts() {
		return "no action is safe any more: " + fresh.Why
	}
	return ""
}

func diffEngines(a, b []EngineRef) string {
	return diffRefs("engine", a, b, func(e EngineRef) (string, string) { return e.Name, e.UID },
		func(e EngineRef) string {
			return fmt.Sprintf("active=%t node=%q deleting=%t", e.Active, e.NodeID, e.Deleting)
		},
		fmt.Sprintf(" (or no longer labelled %s=<volume>)", longhorn.VolumeLabel))
}

func diffReplicas(a, b []ReplicaRef) string {
	return diffRefs("replica", a, b, func(r ReplicaRef) (string, string) { return r.Name, r.UID },
		func(r ReplicaRef) string {
			return fmt.Sprintf("engine %s active=%t deleting=%t", r.EngineName, r.Active, r.Deleting)
		}, "")
}

// diffRefs says the first difference between the objects of a kind read
// before (a) and now (b): one appeared, was replaced (another uid), changed
// the flags the repair depends on (as flags renders them) or is gone (the
// sentence ending with goneNote); "" when there is none.
func diffRefs[T any](kind string, a, b []T, id func(T) (name, uid string), flags func(T) string, goneNote string) string {
	before := map[string]T{}
	for _, x := range a {
		name, _ := id(x)
		before[name] = x
	}
	for _, x := range b {
		name, uid := id(x)
		old, ok := before[name]
		if !ok {
			return fmt.Sprintf("%s %s appeared", kind, name)
		}
		if _, oldUID := id(old); oldUID != uid {
			return fmt.Sprintf("%s %s was replaced (uid %s, was %s)", kind, name, uid, oldUID)
		}
		if f, oldF := flags(x), flags(old); f != oldF {
			return fmt.Sprintf("%s %s changed (%s, was %s)", kind, name, f, oldF)
		}
		delete(before, name)
	}
	for _, x := range a {
		name, _ := id(x)
		if _, ok := before[name]; ok {
			return fmt.Sprintf("%s %s is gone%s", kind, name, goneNote)
		}
	}
	return ""
}

func names(es []EngineRef) string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return strings.Join(out, ",")
}

func dedupe(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// loadPlan reads the selected volumes (every volume with --all) and plans.
func loadPlan(ctx context.Context, c *readstate.Client, ns string, volumes []string, s Strategy, o detect.Options,
	warnf func(string, ...any)) (*Plan, error) {
	st, err := readstate.Load(ctx, c, readstate.LoadOptions{Namespace: ns, Volumes: volumes, Warnf: warnf})
	if err != nil {
		return nil, err
	}
	o.SkipOrphans = true
	res := detect.Classify(st, o)
	return planState(st, res, volumes, s), nil
}
