package testenv

import "github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"

// CrashDetached is what Longhorn 1.7+ leaves when the engine serving a
// live migration's source crashes or its node is lost: the migration is
// cancelled, the volume detached (spec.nodeID and both migration fields
// empty, the one engine left stopped with no node), and it is not attached
// again while the csi-attacher tickets of both nodes are in place.
func CrashDetached(version, vol string) *Objects {
	o := Healthy(version, vol)
	v := o.Volumes[0]
	v.Spec.NodeID = ""
	v.Status.CurrentNodeID = ""
	v.Status.State = longhorn.VolumeStateDetached
	v.Status.Robustness = longhorn.RobustnessUnknown
	e := o.Engines[0]
	e.Spec.NodeID, e.Spec.DesireState = "", longhorn.StateStopped
	e.Status.CurrentState, e.Status.Endpoint = longhorn.StateStopped, ""
	e.Status.ReplicaModeMap = map[string]string{}
	for _, r := range o.Replicas {
		r.Status.CurrentState = longhorn.StateStopped
	}
	va := NewVA(vol, NodeA, NodeB)
	for id, st := range va.Status.AttachmentTicketStatuses {
		st.Satisfied = false
		va.Status.AttachmentTicketStatuses[id] = st
	}
	o.VAs = []*longhorn.VolumeAttachment{va}
	return o
}
