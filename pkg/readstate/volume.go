package readstate

import (
	"context"
	"encoding/json"
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

// VolumeRead is one volume read on its own, for commands that name volumes
// and for the re-reads before and after a write: a GET of the volume, its
// engines and replicas by the longhornvolume label (as longhorn-manager
// lists them), a GET of its VolumeAttachment (named after the volume, 1.5+)
// and the version setting; then, for where the workload runs, a list of the
// storage.k8s.io VolumeAttachments and one of the pods of the PVC's
// namespace (State.Workloads). The request count does not depend on the
// size of the cluster, except that a cluster with more than 500
// storage.k8s.io VolumeAttachments (about one per attached volume of any
// driver) takes one more page per 500 (they are cluster-scoped and cannot
// be selected by PV).
type VolumeRead struct {
	// State is the same typed state a namespace read gives, restricted to
	// this volume: engines oldest first, replicas in name order.
	State *longhorn.State
	// Found is false when the volume does not exist (State then holds the
	// version only).
	Found bool
	// Raw holds the objects exactly as the API server sent them, for a
	// backup and for fields the typed model does not keep.
	Raw RawObjects
}

// RawObjects are the JSON bodies of one volume's objects, in State's order.
type RawObjects struct {
	Volume           json.RawMessage
	Engines          []json.RawMessage
	Replicas         []json.RawMessage
	VolumeAttachment json.RawMessage // nil when there is none
}

// ReadVolume reads one volume and the version setting, all at once.
func ReadVolume(ctx context.Context, c *Client, ns, vol string) (*VolumeRead, error) {
	return escaped(readVolume(ctx, c, ns, vol, nil, true))
}

// ReadVolumeAt reads one volume of a Longhorn whose version is already known
// (src says where it came from).
func ReadVolumeAt(ctx context.Context, c *Client, ns, vol string, ver longhorn.Version, src string) (*VolumeRead, error) {
	return escaped(readVolume(ctx, c, ns, vol, &knownVersion{v: ver, src: src}, true))
}

// escaped escapes the read's state for a terminal, as Load does; the raw
// objects (the backups) stay as the server sent them.
func escaped(r *VolumeRead, err error) (*VolumeRead, error) {
	if r != nil && r.State != nil {
		safetext.All(r.State)
	}
	return r, err
}

// knownVersion is what a read of several volumes learnt from the first:
// the version and, when read, the replica-auto-balance setting, so that
// neither is read again per volume.
type knownVersion struct {
	v   longhorn.Version
	src string
	// autoBalance is the setting's value once read (nil: read it).
	autoBalance *string
}

// readVolume runs its reads at once: one round trip. Without a known
// version the setting is read alongside, and the attachment is asked for
// before the version is known and dropped if this Longhorn has none (errors
// included). Errors are reported in a fixed order: volume, version,
// engines, replicas, attachment.
//
// With workloads, the storage.k8s.io VolumeAttachments are listed in that
// round too, and the pods of the volume's PVC namespace once the volume is
// read (a second round trip): two more requests, whatever the cluster.
func readVolume(ctx context.Context, c *Client, ns, vol string, known *knownVersion, workloads bool) (*VolumeRead, error) {
	st := &longhorn.State{Namespace: ns, Now: time.Now()}
	out := &VolumeRead{State: st}
	sel := labels.Set{longhorn.VolumeLabel: vol}.AsSelector().String()
	withVA := known == nil || !known.v.Known() || known.v.HasVolumeAttachments()

	var (
		wg                                    sync.WaitGroup
		volErr, verErr, engErr, repErr, vaErr error
		engRaw, repRaw                        []json.RawMessage
		csi                                   csiRead
	)
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	if known == nil {
		run(func() { st.Version, st.VersionSource, verErr = ReadVersion(ctx, c, ns) })
	} else {
		st.Version, st.VersionSource = known.v, known.src
	}
	if known != nil && known.autoBalance != nil {
		st.ReplicaAutoBalance = *known.autoBalance
	} else {
		run(func() { st.ReplicaAutoBalance = ReadReplicaAutoBalance(ctx, c, ns) })
	}
	run(func() {
		out.Raw.Volume, volErr = c.REST.Get().Namespace(ns).Resource(longhorn.Volumes.Plural).Name(vol).DoRaw(ctx)
	})
	run(func() { engRaw, engErr = listRaw(ctx, c, longhorn.Engines, ns, sel) })
	run(func() { repRaw, repErr = listRaw(ctx, c, longhorn.Replicas, ns, sel) })
	if withVA {
		run(func() {
			out.Raw.VolumeAttachment, vaErr = c.REST.Get().Namespace(ns).Resource(longhorn.VolumeAttachments.Plural).Name(vol).DoRaw(ctx)
		})
	}
	if workloads && c.Dynamic != nil {
		run(func() { csi.run(ctx, c.Dynamic) })
	}
	wg.Wait()
	if verErr == nil && st.Version.Known() && !st.Version.HasVolumeAttachments() {
		withVA, vaErr, out.Raw.VolumeAttachment = false, nil, nil
	}

	switch {
	case volErr != nil && !isMissingObject(volErr, vol):
		return nil, explainGet(volErr, longhorn.Volumes, ns)
	case verErr != nil:
		return nil, verErr
	case volErr != nil:
		out.Raw = RawObjects{}
		return out, nil
	case engErr != nil:
		return nil, engErr
	case repErr != nil:
		return nil, repErr
	}
	out.Found = true
	var v longhorn.Volume
	if err := decodeObject(out.Raw.Volume, &v, longhorn.Volumes, vol); err != nil {
		return nil, err
	}
	st.Volumes = []longhorn.Volume{v}
	if workloads {
		st.Workloads = readWorkloads(ctx, c.Dynamic, st.Volumes, &csi)
	}

	// The label selects, as longhorn-manager lists them; VolumeOf then
	// judges with the namespace read's rule, so an object labelled for this
	// volume whose spec names another is left out here as it is there. The
	// one difference: an object labelled for another volume whose spec names
	// this one is not seen (TestReadPathsAgree skips that draw).
	var err error
	if st.Engines, out.Raw.Engines, err = ofVolume(engRaw, longhorn.Engines, vol, longhorn.OlderEngine); err != nil {
		return nil, err
	}
	if st.Replicas, out.Raw.Replicas, err = ofVolume(repRaw, longhorn.Replicas, vol, func(a, b *longhorn.Replica) bool { return a.Name < b.Name }); err != nil {
		return nil, err
	}

	// The engine frontends only of a v2 volume on 1.12+ (or an unknown
	// release): one more request, after the volume, and none for a v1
	// volume, for which Longhorn makes none.
	if v.DataEngineName() == longhorn.DataEngineV2 && !(st.Version.Known() && !st.Version.HasEngineFrontends()) {
		efRaw, efErr := listRaw(ctx, c, longhorn.EngineFrontends, ns, sel)
		if efErr == nil {
			if st.EngineFrontends, _, err = ofVolume(efRaw, longhorn.EngineFrontends, vol, func(a, b *longhorn.EngineFrontend) bool { return a.Name < b.Name }); err != nil {
				return nil, err
			}
		} else if err := frontendsRead(st, st.Volumes, nil, efErr, func(string, ...any) {}); err != nil {
			return nil, err
		}
	}

	switch {
	case !withVA:
	case vaErr == nil:
		var va longhorn.VolumeAttachment
		if err := decodeObject(out.Raw.VolumeAttachment, &va, longhorn.VolumeAttachments, vol); err != nil {
			return nil, err
		}
		// VolumeOf's rule, as for the engines: an attachment named after
		// this volume whose spec.volume names another is not this volume's.
		if longhorn.VolumeOf(&va) == vol {
			st.VolumeAttachments = []longhorn.VolumeAttachment{va}
		} else {
			out.Raw.VolumeAttachment = nil
		}
	case apierrors.IsNotFound(vaErr):
		// No attachment (or, on an unknown version, no such resource).
		out.Raw.VolumeAttachment = nil
	default:
		return nil, cmdutil.Explain(vaErr, "get", longhorn.VolumeAttachments.GroupResource(), ns)
	}
	return out, nil
}

// ReadVolumes reads the named volumes one by one into one state, with the
// version read once, then the CSI attachments once and the pods of each PVC
// namespace once. Unknown names are a NotFoundError naming all of them,
// returned with the state of the others.
func ReadVolumes(ctx context.Context, c *Client, ns string, names []string) (*longhorn.State, error) {
	st := &longhorn.State{Namespace: ns, Now: time.Now()}
	var (
		known   *knownVersion
		missing []string
	)
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		vr, err := readVolume(ctx, c, ns, n, known, false)
		if err != nil {
			return nil, err
		}
		if known == nil {
			known = &knownVersion{vr.State.Version, vr.State.VersionSource, &vr.State.ReplicaAutoBalance}
			st.Version, st.VersionSource = known.v, known.src
			st.ReplicaAutoBalance = vr.State.ReplicaAutoBalance
		}
		if !vr.Found {
			missing = append(missing, n)
			continue
		}
		st.Volumes = append(st.Volumes, vr.State.Volumes...)
		st.Engines = append(st.Engines, vr.State.Engines...)
		st.Replicas = append(st.Replicas, vr.State.Replicas...)
		st.VolumeAttachments = append(st.VolumeAttachments, vr.State.VolumeAttachments...)
		st.EngineFrontends = append(st.EngineFrontends, vr.State.EngineFrontends...)
	}
	if len(st.Volumes) > 0 {
		st.Workloads = readWorkloads(ctx, c.Dynamic, st.Volumes, nil)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return st, &NotFoundError{Names: missing, Namespace: ns}
	}
	return st, nil
}

// listRaw lists res by selector and keeps each item's JSON.
func listRaw(ctx context.Context, c *Client, res longhorn.Resource, ns, selector string) ([]json.RawMessage, error) {
	return ListAll[json.RawMessage](ctx, c, res, ns, selector, 0)
}

func decodeObject(raw []byte, into any, res longhorn.Resource, name string) error {
	if err := json.Unmarshal(raw, into); err != nil {
		if name != "" {
			return fmt.Errorf("decoding %s %q: %w", res.GroupResource(), name, err)
		}
		return fmt.Errorf("decoding %s: %w", res.GroupResource(), err)
	}
	return nil
}

// isMissingObject tells a 404 for the object apart from a 404 for the whole
// resource (Longhorn's CRDs not installed): only the first names the object.
func isMissingObject(err error, name string) bool {
	var s apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &s) {
		return false
	}
	d := s.Status().Details
	return d != nil && d.Name == name
}

// explainGet explains a failed GET; a resource the server does not have is
// reported as a list would report it (Longhorn not installed).
func explainGet(err error, res longhorn.Resource, ns string) error {
	verb := "get"
	if apierrors.IsNotFound(err) {
		verb = "list"
	}
	return cmdutil.Explain(err, verb, res.GroupResource(), ns)
}

// sortTogether sorts typed objects and their raw bodies with one order.
// ofVolume decodes the objects of r in raws and keeps those VolumeOf gives
// to vol, with their raw forms, sorted together by less.
func ofVolume[T any](raws []json.RawMessage, r longhorn.Resource, vol string, less func(a, b *T) bool) ([]T, []json.RawMessage, error) {
	var items []T
	var kept []json.RawMessage
	for _, raw := range raws {
		var it T
		if err := decodeObject(raw, &it, r, ""); err != nil {
			return nil, nil, err
		}
		if longhorn.VolumeOf(&it) == vol {
			items = append(items, it)
			kept = append(kept, raw)
		}
	}
	sortTogether(items, kept, less)
	return items, kept, nil
}

func sortTogether[T any](items []T, raws []json.RawMessage, less func(a, b *T) bool) {
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return less(&items[idx[i]], &items[idx[j]]) })
	ti := make([]T, len(items))
	tr := make([]json.RawMessage, len(raws))
	for i, k := range idx {
		ti[i], tr[i] = items[k], raws[k]
	}
	copy(items, ti)
	copy(raws, tr)
}
