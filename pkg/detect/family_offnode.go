package detect

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// engineOffNode: an attached v1 volume's one engine runs on another node
// than status.currentNodeID and spec.nodeID, with no migration requested
// or being finished. Nothing in Longhorn moves an engine of an attached volume:
// Longhorn 1.4.3 left such a volume as it was (explorer, seed 27 state
// 81), and Longhorn 1.5.3's finish of a confirm that took the engine on
// status.pendingNodeID ended in this shape (seed 27 state 92). The
// workload's node has no engine serving the volume.
func engineOffNode(c *familyCtx, f *Finding) bool {
	v := c.v
	if v.DataEngineName() == longhorn.DataEngineV2 || v.Spec.MigrationNodeID != "" || v.Status.CurrentMigrationNodeID != "" ||
		v.Status.CurrentNodeID == "" || v.Status.State != longhorn.VolumeStateAttached || v.UpgradePending() || len(c.engines) != 1 {
		return false
	}
	e := c.engines[0]
	if !e.IsActive() || e.Spec.NodeID == "" || e.Spec.NodeID == v.Status.CurrentNodeID || e.Spec.NodeID == v.Spec.NodeID {
		return false
	}
	// From 1.5 a volume no ticket asks for on spec.nodeID is detached,
	// which ends it (Longhorn 1.10.0, seed 27 state 42).
	if c.st.Version.HasVolumeAttachments() && !c.va.HasTicketOn(v.Spec.NodeID) {
		return false
	}
	k := FamilyInfo{
		Issues:          []string{},
		Releases:        "seen on 1.4.3 and 1.5.3 (on Longhorn's own controllers, found by this project's tests)",
		AffectedRelease: c.inRange("1.4.0", "1.5.999"),
		Steps: []string{
			c.kubectl("get engines.longhorn.io -l longhornvolume=" + v.Name + " -o wide"),
			fmt.Sprintf("stop the workload so that the volume detaches, then start it again on %s, where it attaches with the engine on that node; do not delete the engine or any replica (not run on Longhorn's controllers here)", v.Status.CurrentNodeID),
		},
	}
	reason := fmt.Sprintf("the volume is attached on %s but its one engine %s runs on %s, with no migration requested or being finished: Longhorn does not move the engine by itself, and nothing serves the volume on %s",
		v.Status.CurrentNodeID, e.Name, e.Spec.NodeID, v.Status.CurrentNodeID)
	c.set(f, TypeEngineOffNode, SeverityWarning, reason, k, "engine-off-its-node")
	f.Keep = e.Name
	markRoles(f, e.Name, nil)
	return true
}
