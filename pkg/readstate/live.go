package readstate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// LoadOptions select what to read.
type LoadOptions struct {
	Namespace string
	// Volumes restricts the state to these volumes (all when empty).
	Volumes []string
	// Selector is a label selector on volumes.
	Selector string
	// PageSize is the LIST limit.
	PageSize int
	// Warnf reports things that did not stop the read (may be nil).
	Warnf func(format string, args ...any)
}

// NotFoundError is an unknown volume name.
type NotFoundError struct {
	Names     []string
	Namespace string
}

func (e *NotFoundError) Error() string {
	if len(e.Names) == 1 {
		return fmt.Sprintf("volume %q not found in namespace %q", e.Names[0], e.Namespace)
	}
	return fmt.Sprintf("volumes %q not found in namespace %q", e.Names, e.Namespace)
}

// Load reads the Longhorn objects of one namespace and keeps only the
// selected volumes and what belongs to them. Named volumes are read on their
// own (ReadVolumes: a few requests each, whatever the size of the cluster);
// otherwise every resource is read with one paginated LIST (never one
// request per volume).
//
// Every string of the state is escaped for a terminal (safetext.All), here
// once, so that no printer has to: a name or a message with an escape
// sequence shows as text. Backups are taken from the raw objects instead.
func Load(ctx context.Context, c *Client, o LoadOptions) (*longhorn.State, error) {
	st, err := load(ctx, c, o)
	if st != nil {
		safetext.All(st)
	}
	return st, err
}

func load(ctx context.Context, c *Client, o LoadOptions) (*longhorn.State, error) {
	warnf := o.Warnf
	if warnf == nil {
		warnf = func(string, ...any) {}
	}
	if len(o.Volumes) > 0 {
		return loadNamed(ctx, c, o, warnf)
	}
	return loadNamespace(ctx, c, o, warnf)
}

// loadNamespace reads every resource at once, each with a paginated LIST:
// a real API server serves them on several cores, and the client decodes
// one resource's pages while it waits for another's. Errors are reported in
// a fixed order (volumes, version, engines, replicas, attachments), as if
// the reads had run one after the other.
func loadNamespace(ctx context.Context, c *Client, o LoadOptions, warnf func(string, ...any)) (*longhorn.State, error) {
	ns := o.Namespace
	st := &longhorn.State{Namespace: ns, Now: time.Now()}
	var (
		wg                             sync.WaitGroup
		vols                           []longhorn.Volume
		ims                            []longhorn.InstanceManager
		ver                            longhorn.Version
		src                            string
		volErr, verErr, engErr, repErr error
		vaErr, imErr, efErr            error
	)
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(func() { vols, volErr = ListAll[longhorn.Volume](ctx, c, longhorn.Volumes, ns, o.Selector, o.PageSize) })
	run(func() { ver, src, verErr = ReadVersion(ctx, c, ns) })
	run(func() { st.ReplicaAutoBalance = ReadReplicaAutoBalance(ctx, c, ns) })
	run(func() { st.Engines, engErr = ListAll[longhorn.Engine](ctx, c, longhorn.Engines, ns, "", o.PageSize) })
	run(func() { st.Replicas, repErr = ListAll[longhorn.Replica](ctx, c, longhorn.Replicas, ns, "", o.PageSize) })
	// Listed before the version is known; dropped, errors included, when
	// the version says this Longhorn has no attachments.
	run(func() {
		st.VolumeAttachments, vaErr = ListAll[longhorn.VolumeAttachment](ctx, c, longhorn.VolumeAttachments, ns, "", o.PageSize)
	})
	run(func() {
		ims, imErr = ListAll[longhorn.InstanceManager](ctx, c, longhorn.InstanceManagers, ns, "", o.PageSize)
	})
	// Listed before the version is known too, and dropped before 1.12.
	run(func() {
		st.EngineFrontends, efErr = ListAll[longhorn.EngineFrontend](ctx, c, longhorn.EngineFrontends, ns, "", o.PageSize)
	})
	// Pods and CSI attachments never fail the read: they degrade to "not
	// checked" (or, on an unexpected error, to a refused repair).
	run(func() { st.Workloads = readAllWorkloads(ctx, c.Dynamic) })
	var pdbWarn error
	run(func() { st.PDBs, st.PDBsRead, pdbWarn = ReadPDBs(ctx, c.Dynamic, ns) }) // pdb.go
	wg.Wait()

	switch {
	case volErr != nil:
		return nil, volErr
	case verErr != nil:
		return nil, verErr
	}
	st.Version, st.VersionSource = ver, src
	if !ver.Known() {
		if len(vols) == 0 {
			return nil, noLonghornWhere(ctx, c, ns)
		}
		warnf("Longhorn version unknown (%s): findings are reported, no repair is proposed", src)
	}
	want, err := selectVolumes(vols, o)
	if err != nil {
		return nil, err
	}
	st.Volumes = vols
	switch {
	case engErr != nil:
		return nil, engErr
	case repErr != nil:
		return nil, repErr
	}
	switch {
	case ver.Known() && !ver.HasVolumeAttachments():
		st.VolumeAttachments = nil
	case vaErr != nil && !apierrors.IsNotFound(vaErr):
		return nil, vaErr
	case vaErr != nil:
		st.VolumeAttachments = nil
	}
	if want != nil {
		st.EngineFrontends = filterByVolume(st.EngineFrontends, want)
	}
	if err := frontendsRead(st, vols, want, efErr, warnf); err != nil {
		return nil, err
	}
	if imErr == nil {
		st.InstanceManagers, st.InstanceManagersRead = ims, true
	} else {
		warnf("instance managers not read, orphan engine processes not checked: %v", imErr)
	}
	WarnWorkloads(&st.Workloads, warnf)
	if pdbWarn != nil {
		warnf("%v", pdbWarn)
	}
	if want != nil {
		st.Engines = filterByVolume(st.Engines, want)
		st.Replicas = filterByVolume(st.Replicas, want)
		st.VolumeAttachments = filterByVolume(st.VolumeAttachments, want)
	}
	return st, nil
}

func loadNamed(ctx context.Context, c *Client, o LoadOptions, warnf func(string, ...any)) (*longhorn.State, error) {
	st, err := ReadVolumes(ctx, c, o.Namespace, o.Volumes)
	var nf *NotFoundError
	switch {
	case errors.As(err, &nf) && len(st.Volumes) == 0 && !st.Version.Known():
		return nil, noLonghornWhere(ctx, c, o.Namespace)
	case err != nil:
		return nil, err
	}
	if !st.Version.Known() {
		warnf("Longhorn version unknown (%s): findings are reported, no repair is proposed", st.VersionSource)
	}
	WarnWorkloads(&st.Workloads, warnf)
	return st, nil
}

// frontendsRead settles the list of EngineFrontends against the release:
// before 1.12 there is no such kind and whatever the list said is dropped.
// From 1.12 (or on an unknown release) a failed list is an error when a
// selected volume is v2 (the kind missing, or no permission to read it:
// the verdict on that volume rests on its frontend, so the check is
// incomplete, never clean); with v1 volumes only, none exists to read
// (Longhorn creates them for v2 volumes only): a list that found no such
// kind is dropped, any other failure a warning.
func frontendsRead(st *longhorn.State, vols []longhorn.Volume, want map[string]bool, err error, warnf func(string, ...any)) error {
	if st.Version.Known() && !st.Version.HasEngineFrontends() {
		st.EngineFrontends = nil
		return nil
	}
	if err == nil {
		return nil
	}
	st.EngineFrontends = nil
	for i := range vols {
		v := &vols[i]
		if (want == nil || want[v.Name]) && v.DataEngineName() == longhorn.DataEngineV2 {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("volume %s is a v2 volume on Longhorn %s but the server has no %s: the check needs the volume's engine frontend (the CRD Longhorn 1.12 installs)",
					v.Name, st.Version.String(), longhorn.EngineFrontends.GroupResource())
			}
			return cmdutil.Explain(err, "list", longhorn.EngineFrontends.GroupResource(), st.Namespace)
		}
	}
	if !apierrors.IsNotFound(err) {
		warnf("%s not read (no v2 volume needs them): %v", longhorn.EngineFrontends.GroupResource(), err)
	}
	return nil
}

func noLonghorn(ns string) error {
	return fmt.Errorf("no Longhorn found in namespace %q (no volumes and no %s setting): is the namespace right? Use -n", ns, longhorn.VersionSetting)
}

// Partial reports whether the state covers only some volumes, in which case
// orphan checks (which need every volume) must be skipped.
func (o LoadOptions) Partial() bool { return len(o.Volumes) > 0 || o.Selector != "" }

// ReadVersion reads the current-longhorn-version setting. A missing setting
// is not an error (the version is then unknown and no repair is proposed).
func ReadVersion(ctx context.Context, c *Client, ns string) (longhorn.Version, string, error) {
	s, err := Get[longhorn.Setting](ctx, c, longhorn.Settings, ns, longhorn.VersionSetting)
	switch {
	case apierrors.IsNotFound(err):
		return longhorn.Version{}, "setting " + longhorn.VersionSetting + " not found", nil
	case err != nil:
		return longhorn.Version{}, "", cmdutil.Explain(err, "get", longhorn.Settings.GroupResource(), ns)
	}
	v, perr := longhorn.ParseVersion(s.Value)
	if perr != nil {
		return longhorn.Version{}, fmt.Sprintf("setting %s has value %q", longhorn.VersionSetting, s.Value), nil
	}
	return v, "setting " + longhorn.VersionSetting, nil
}

// ReadReplicaAutoBalance reads the global replica-auto-balance setting. A
// missing setting reads "" (Longhorn's default, disabled); any other failure
// reads longhorn.SettingUnreadable and is not an error: the repair that
// depends on it then refuses.
func ReadReplicaAutoBalance(ctx context.Context, c *Client, ns string) string {
	s, err := Get[longhorn.Setting](ctx, c, longhorn.Settings, ns, longhorn.ReplicaAutoBalanceSetting)
	switch {
	case apierrors.IsNotFound(err):
		return ""
	case err != nil:
		return longhorn.SettingUnreadable
	}
	return s.Value
}

// selectVolumes is the set of volumes kept by name (offline reads; a live
// read of named volumes reads only them) or by selector; nil keeps every
// volume. Unknown names are a NotFoundError.
func selectVolumes(vols []longhorn.Volume, o LoadOptions) (map[string]bool, error) {
	if len(o.Volumes) == 0 {
		if o.Selector == "" {
			return nil, nil
		}
		if _, err := labels.Parse(o.Selector); err != nil {
			return nil, fmt.Errorf("invalid selector %q: %w", o.Selector, err)
		}
		want := make(map[string]bool, len(vols))
		for _, v := range vols {
			want[v.Name] = true
		}
		return want, nil
	}
	have := make(map[string]bool, len(vols))
	for _, v := range vols {
		have[v.Name] = true
	}
	want := make(map[string]bool, len(o.Volumes))
	var missing []string
	for _, n := range o.Volumes {
		if !have[n] {
			missing = append(missing, n)
		}
		want[n] = true
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &NotFoundError{Names: missing, Namespace: o.Namespace}
	}
	return want, nil
}

// filterByVolume keeps the objects whose volume (longhorn.VolumeOf) is wanted.
func filterByVolume[T any](items []T, want map[string]bool) []T {
	kept := items[:0]
	for i := range items {
		if want[longhorn.VolumeOf(&items[i])] {
			kept = append(kept, items[i])
		}
	}
	return kept
}
