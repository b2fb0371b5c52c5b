package detect

import (
	"sort"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Objects are a volume's objects as classified: each with the uid and
// resourceVersion a write is pinned to, and the fields a repair rests on.
// fix acts on them and compares them with a later read; they are not part
// of the report.
type Objects struct {
	VolumeUID             string
	VolumeResourceVersion string
	// Engines and Replicas are in name order.
	Engines  []EngineRef
	Replicas []ReplicaRef
}

// EngineRef pins one engine: the server refuses a write whose uid or
// resourceVersion no longer match.
type EngineRef struct {
	Name            string
	UID             string
	ResourceVersion string
	NodeID          string
	Active          bool
	Deleting        bool
}

// ReplicaRef is a replica's identity and the flags a repair depends on.
// ResourceVersion pins a write; it is not compared between reads, since a
// replica's status moves on its own.
type ReplicaRef struct {
	Name            string
	UID             string
	ResourceVersion string
	EngineName      string
	Active          bool
	Deleting        bool
}

// Engine is the engine of that name, ok false when the volume has none.
func (o *Objects) Engine(name string) (EngineRef, bool) {
	for _, e := range o.Engines {
		if e.Name == name {
			return e, true
		}
	}
	return EngineRef{}, false
}

// Replica is the replica of that name, ok false when the volume has none.
func (o *Objects) Replica(name string) (ReplicaRef, bool) {
	for _, r := range o.Replicas {
		if r.Name == name {
			return r, true
		}
	}
	return ReplicaRef{}, false
}

// ObjectsOf pins the objects of volume name in st (longhorn.VolumeOf says
// which belong to it); zero when st does not hold the volume. For a state
// read for one volume, where a healthy volume has no finding to carry them.
func ObjectsOf(st *longhorn.State, name string) Objects {
	v := st.Volume(name)
	if v == nil {
		return Objects{}
	}
	return objectsOf(v, st.EnginesOf(name), st.ReplicasOf(name))
}

func objectsOf(v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica) Objects {
	o := Objects{VolumeUID: string(v.UID), VolumeResourceVersion: v.ResourceVersion}
	for _, e := range engines {
		o.Engines = append(o.Engines, EngineRef{Name: e.Name, UID: string(e.UID), ResourceVersion: e.ResourceVersion,
			NodeID: e.Spec.NodeID, Active: e.Spec.Active, Deleting: e.Deleting()})
	}
	for _, r := range replicas {
		o.Replicas = append(o.Replicas, ReplicaRef{Name: r.Name, UID: string(r.UID), ResourceVersion: r.ResourceVersion,
			EngineName: r.Spec.EngineName, Active: r.Spec.Active, Deleting: r.DeletionTimestamp != nil})
	}
	sort.Slice(o.Engines, func(i, j int) bool { return o.Engines[i].Name < o.Engines[j].Name })
	sort.Slice(o.Replicas, func(i, j int) bool { return o.Replicas[i].Name < o.Replicas[j].Name })
	return o
}
