package longhorn

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
