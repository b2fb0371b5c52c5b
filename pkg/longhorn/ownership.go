package longhorn

import "sort"

// VolumeOf names the volume an object belongs to, with the one rule every
// reader and the detector share: a volume is its own name; an engine or a
// replica (or an engine frontend) belongs to spec.volumeName, else to its longhornvolume label (the
// label is what longhorn-manager lists them by); an attachment belongs to
// spec.volume, else to its name (Longhorn names it after the volume). ""
// when the object names no volume.
func VolumeOf(obj any) string {
	switch o := obj.(type) {
	case *Volume:
		return o.Name
	case *Engine:
		return orLabel(o.Spec.VolumeName, o.Labels)
	case *Replica:
		return orLabel(o.Spec.VolumeName, o.Labels)
	case *EngineFrontend:
		return orLabel(o.Spec.VolumeName, o.Labels)
	case *VolumeAttachment:
		if o.Spec.Volume != "" {
			return o.Spec.Volume
		}
		return o.Name
	}
	return ""
}

func orLabel(specName string, labels map[string]string) string {
	if specName != "" {
		return specName
	}
	return labels[VolumeLabel]
}

// OlderEngine orders engines oldest first: by creation time, then (same
// second, or no timestamps) legacy random names before deterministic -e-N
// names and lower N first, then by name. It compares the key (time, has
// suffix, N, name) lexicographically so that it is a total order: comparing
// suffixes "when both have one" and times otherwise is not transitive once
// random and deterministic names mix (after an upgrade to 1.4.4/1.5.2), and a
// random 8-hex name can be all digits.
func OlderEngine(a, b *Engine) bool {
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	na, oka := a.EngineSuffix()
	nb, okb := b.EngineSuffix()
	if oka != okb {
		return !oka
	}
	if oka && na != nb {
		return na < nb
	}
	return a.Name < b.Name
}

// SortEngines puts engines in OlderEngine order.
func SortEngines(es []Engine) {
	sort.SliceStable(es, func(i, j int) bool { return OlderEngine(&es[i], &es[j]) })
}

// Select is the elements of xs that keep accepts, as pointers into xs, in
// xs's order: the one filter over a State's (or a snapshot's) lists, so that
// callers can change what they select without copying objects.
func Select[T any](xs []T, keep func(*T) bool) []*T {
	var out []*T
	for i := range xs {
		if keep(&xs[i]) {
			out = append(out, &xs[i])
		}
	}
	return out
}

// Named is the element of xs called name, as a pointer into xs; nil when
// there is none. Names are unique within a namespace, and a State holds one.
func Named[T any, P interface {
	*T
	GetName() string
}](xs []T, name string) *T {
	for i := range xs {
		if P(&xs[i]).GetName() == name {
			return &xs[i]
		}
	}
	return nil
}

// Volume is st's volume called name, nil when st does not hold it.
func (st *State) Volume(name string) *Volume { return Named(st.Volumes, name) }

// EnginesOf are st's engines of volume vol (VolumeOf's rule), in st's order.
func (st *State) EnginesOf(vol string) []*Engine {
	return Select(st.Engines, func(e *Engine) bool { return VolumeOf(e) == vol })
}

// ReplicasOf are st's replicas of volume vol (VolumeOf's rule), in st's order.
func (st *State) ReplicasOf(vol string) []*Replica {
	return Select(st.Replicas, func(r *Replica) bool { return VolumeOf(r) == vol })
}

// VolumeState is vol as a check of one volume takes it: the volume (nil
// when st does not hold it) and copies of its engines and replicas.
func (st *State) VolumeState(vol string) (*Volume, []Engine, []Replica) {
	return st.Volume(vol), values(st.EnginesOf(vol)), values(st.ReplicasOf(vol))
}

func values[T any](ps []*T) []T {
	out := make([]T, 0, len(ps))
	for _, p := range ps {
		out = append(out, *p)
	}
	return out
}
