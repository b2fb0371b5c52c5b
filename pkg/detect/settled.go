package detect

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Settled lists what keeps volume vol of st from being settled on node, as
// Longhorn leaves a volume once a repair, a confirm or a rollback is done:
// exactly one Engine CR, active, running on node, which is also the
// volume's spec.nodeID and status.currentNodeID; no migration left; at least
// one replica, and every replica active and serving that engine; from 1.5,
// when the volume has attachment tickets, a satisfied one on node. engine is the one Engine CR when there is exactly one; missing
// is empty when the volume is settled.
func Settled(st *longhorn.State, vol, node string) (engine string, missing []string) {
	miss := func(format string, args ...any) { missing = append(missing, fmt.Sprintf(format, args...)) }
	v := st.Volume(vol)
	if v == nil {
		return "", []string{"no volume " + vol}
	}
	if v.Spec.NodeID != node || v.Status.CurrentNodeID != node {
		miss("volume spec.nodeID=%q status.currentNodeID=%q", v.Spec.NodeID, v.Status.CurrentNodeID)
	}
	if v.Spec.MigrationNodeID != "" {
		miss("spec.migrationNodeID=%q", v.Spec.MigrationNodeID)
	}
	if st.Version.HasCurrentMigrationNodeID() && v.Status.CurrentMigrationNodeID != "" {
		miss("status.currentMigrationNodeID=%q", v.Status.CurrentMigrationNodeID)
	}
	engines, replicas := st.EnginesOf(vol), st.ReplicasOf(vol)
	switch len(engines) {
	case 0:
		miss("no engine")
	case 1:
		e := engines[0]
		engine = e.Name
		if !e.IsActive() || e.Spec.NodeID != node || e.Status.CurrentState != longhorn.StateRunning {
			miss("engine %s: node %q active=%t deleting=%t state %q", e.Name, e.Spec.NodeID, e.Spec.Active, e.Deleting(), e.Status.CurrentState)
		}
		var wrong []string
		for _, r := range replicas {
			if r.Spec.EngineName != e.Name || !r.Spec.Active {
				wrong = append(wrong, fmt.Sprintf("%s (engine %s, active=%t)", r.Name, orNone(r.Spec.EngineName), r.Spec.Active))
			}
		}
		if len(wrong) > 0 {
			miss("replicas not active on %s: %v", e.Name, wrong)
		}
		if len(replicas) == 0 {
			miss("no replica")
		}
	default:
		names := make([]string, 0, len(engines))
		for _, e := range engines {
			n := fmt.Sprintf("%s@%s", e.Name, orNone(e.Spec.NodeID))
			switch {
			case e.Deleting():
				n += "(deleting)"
			case e.Spec.Active:
				n += "(active)"
			}
			names = append(names, n)
		}
		miss("%d engine CRs: %v", len(engines), names)
	}
	if st.Version.HasVolumeAttachments() && !ticketSatisfied(st, vol, node) {
		// A volume read without tickets (a state written by hand, a bundle
		// without VolumeAttachments) is not judged on them, as fix never was.
		miss("no satisfied attachment ticket on %s", node)
	}
	return engine, missing
}

// ticketSatisfied: an attachment ticket of vol on node is satisfied, of any
// attacher (the csi-attacher's, or the UI's), or vol has no ticket at all.
func ticketSatisfied(st *longhorn.State, vol, node string) bool {
	seen := false
	for i := range st.VolumeAttachments {
		va := &st.VolumeAttachments[i]
		if longhorn.VolumeOf(va) != vol {
			continue
		}
		for id, t := range va.Spec.AttachmentTickets {
			seen = true
			if t.NodeID == node && va.Satisfied(id) {
				return true
			}
		}
	}
	return !seen
}
