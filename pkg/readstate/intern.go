package readstate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// interner shares equal strings between the objects of one read. Only
// fields whose values repeat across objects go through it (names, UIDs and
// resourceVersions are unique: sharing them would only grow the table). It
// lives as long as the read, and is not safe for concurrent use.
type interner map[string]string

func (in interner) str(s *string) {
	if *s == "" {
		return
	}
	if v, ok := in[*s]; ok {
		*s = v
		return
	}
	in[*s] = *s
}

func (in interner) strs(ss ...*string) {
	for _, s := range ss {
		in.str(s)
	}
}

// values shares a map's values (replica addresses and modes repeat; its
// keys are names).
func (in interner) values(m map[string]string) {
	for k, v := range m {
		if w, ok := in[v]; ok {
			m[k] = w
		} else {
			in[v] = v
		}
	}
}

func (in interner) sharedMeta(m metav1.Object) {
	ns := m.GetNamespace()
	in.str(&ns)
	m.SetNamespace(ns)
}

// shared goes through the fields of the model that repeat.
func (in interner) shared(obj any) {
	switch o := obj.(type) {
	case *longhorn.Volume:
		sp, st := &o.Spec, &o.Status
		in.strs(&sp.NodeID, &sp.MigrationNodeID, &sp.EngineNodeID, &sp.AccessMode, &sp.Frontend, &sp.LastAttachedBy,
			&sp.EngineImage, &sp.Image, &sp.BackendStoreDriver, &sp.DataEngine, &sp.Size,
			&st.OwnerID, &st.State, &st.Robustness, &st.CurrentNodeID, &st.CurrentEngineNodeID, &st.CurrentImage,
			&st.PendingNodeID, &st.CurrentMigrationNodeID, &st.SwitchoverState, &st.KubernetesStatus.Namespace)
	case *longhorn.Engine:
		sp, st := &o.Spec, &o.Status
		in.strs(&sp.VolumeSize, &sp.NodeID, &sp.DesireState, &sp.EngineImage, &sp.Image, &sp.BackendStoreDriver,
			&sp.DataEngine, &sp.Frontend,
			&st.OwnerID, &st.CurrentState, &st.InstanceManagerName, &st.CurrentImage, &st.IP)
		in.values(sp.ReplicaAddressMap)
		in.values(st.ReplicaModeMap)
	case *longhorn.Replica:
		sp, st := &o.Spec, &o.Status
		in.strs(&sp.NodeID, &sp.DesireState, &sp.DiskID, &sp.DiskPath, &sp.HealthyAt, &sp.FailedAt,
			&sp.EngineImage, &sp.Image, &st.OwnerID, &st.CurrentState, &st.InstanceManagerName)
	case *longhorn.VolumeAttachment:
		for id, t := range o.Spec.AttachmentTickets {
			if t.ID == id { // one string for the key and the id
				t.ID = id
			}
			in.strs(&t.Type, &t.NodeID)
			in.values(t.Parameters)
			o.Spec.AttachmentTickets[id] = t
		}
		for id, s := range o.Status.AttachmentTicketStatuses {
			if s.ID == id {
				s.ID = id
			}
			o.Status.AttachmentTicketStatuses[id] = s
		}
	case *longhorn.InstanceManager:
		in.strs(&o.Spec.NodeID, &o.Spec.Type, &o.Status.CurrentState)
	}
}
