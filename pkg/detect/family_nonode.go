package detect

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// migrationWithoutNode: spec.migrationNodeID set while spec.nodeID is
// empty, after the old engine's node died (longhorn#8735, harvester#6117).
// On 1.5–1.6 no engine can become current: processMigration needs
// spec.nodeID and the VolumeAttachment controller never cancels. From
// 1.7.0 the VolumeAttachment controller cancels a migration of a detached
// volume itself ("Cancelling migration for detached volume").
func migrationWithoutNode(c *familyCtx, f *Finding) bool {
	v := c.v
	target := v.Spec.MigrationNodeID
	if target == "" || v.Spec.NodeID != "" {
		return false
	}
	k := FamilyInfo{
		Issues:          []string{"longhorn/longhorn#8735", "harvester/harvester#6117"},
		Releases:        "1.5.0–1.6.x (fixed in 1.7.0)",
		AffectedRelease: c.inRange("1.5.0", "1.6.999"),
	}
	va := longhorn.CSITicketID(v.Name, target)
	for _, a := range c.st.Workloads.CSIAttachmentsOf(v) {
		if a.NodeName == target {
			va = a.Name
		}
	}
	k.Steps = []string{
		c.csiAttachmentsCmd(),
		fmt.Sprintf("kubectl delete volumeattachments.storage.k8s.io %s   # the migration target %s's CSI attachment", va, target),
		fmt.Sprintf("last resort, only if spec.migrationNodeID is still set once that attachment is gone: %s",
			c.kubectl(fmt.Sprintf(`patch volumes.longhorn.io %s --type=merge -p '{"spec":{"migrationNodeID":""}}'`, v.Name))),
	}
	// Seen on Longhorn's own controllers (internal/explore E18, 1.5.3 and
	// 1.10.0): with no csi ticket asking for the target, the
	// VolumeAttachment controller clears the request; from 1.7.0 it cancels
	// the migration of a detached volume in any case.
	ver := c.st.Version
	clears := ver.Known() && ver.HasVolumeAttachments() && c.va != nil && !c.hasCSITicketFor(target)
	if nodes := c.va.CSITicketNodes(); ver.Known() && ver.FinishesMigrationWhenDetached() && len(nodes) >= 2 {
		// Longhorn 1.10.0 cancelled explorer seed 33 state 153 (tickets
		// on three nodes) and left it detached: the crash-detached state.
		reason := fmt.Sprintf("spec.migrationNodeID is %s while spec.nodeID is empty: Longhorn %s cancels this migration request itself, but csi-attacher tickets ask for the volume on %d nodes (%s), so it then keeps the volume detached until all but one are gone; find the workload that should have it (kubectl get volumeattachments.storage.k8s.io) and remove the others' attachments; see the steps",
			target, ver, len(nodes), strings.Join(nodes, ", "))
		c.set(f, TypeMigrationWithoutNode, SeverityWarning, reason, k, "migration-without-node")
		markMigration(f, target)
		return true
	}
	if ver.Known() && ver.FinishesMigrationWhenDetached() && v.Status.CurrentNodeID == "" {
		// Once cancelled, the finish runs on the detached volume (1.12.0
		// held explorer seed 35 state 93 so: the one engine inactive).
		cancelled := *v
		cancelled.Spec.MigrationNodeID = ""
		if detachedFinishFails(&cancelled, c.engines) {
			reason := fmt.Sprintf("spec.migrationNodeID is %s while spec.nodeID is empty: Longhorn %s cancels this migration request itself, then finishes it on the detached volume and finds no current engine among %s (none on status.currentMigrationNodeID %s): every sync fails with \"cannot find the current engine for the switching\"; do not delete engines or replicas by hand; see the steps",
				target, ver, enginesWhere(c.engines), orNone(v.Status.CurrentMigrationNodeID))
			c.set(f, TypeMigrationWithoutNode, SeverityWarning, reason, k, "migration-without-node")
			markMigration(f, target)
			return true
		}
	}
	if clears || (ver.Known() && ver.AtLeast(1, 7, 0)) {
		c.setWait(f, TypeMigrationWithoutNode,
			fmt.Sprintf("spec.migrationNodeID is %s while spec.nodeID is empty: Longhorn %s cancels this migration request itself; if it lasts, see the steps", target, ver),
			k, "migration-without-node")
		markMigration(f, target)
		return true
	}
	reason := fmt.Sprintf("spec.migrationNodeID is %s while spec.nodeID is empty (the old engine's node went away during a migration): no engine can become current and the volume neither attaches nor detaches; delete the migration target's CSI VolumeAttachment",
		target)
	c.set(f, TypeMigrationWithoutNode, SeverityWarning, reason, k, "migration-without-node")
	markMigration(f, target)
	return true
}

// WithoutNodeEnds returns the two ends of a migration Longhorn 1.5 or 1.6
// left without a node: the volume detached with spec.migrationNodeID set and
// spec.nodeID empty, and a csi-attacher ticket for exactly two nodes, the
// target's and the source's. Seen on Longhorn 1.5.3's own controllers after
// the source engine crashed mid-migration; removing the target's ticket
// (longhorn#8735's repair) makes Longhorn attach the volume on the source
// again. Empty when the volume is not in that state.
func WithoutNodeEnds(ver longhorn.Version, v *longhorn.Volume, va *longhorn.VolumeAttachment) (source, target string) {
	if !ver.HasVolumeAttachments() || ver.AtLeast(1, 7, 0) || va == nil || !v.Spec.Migratable {
		return "", ""
	}
	target = v.Spec.MigrationNodeID
	if target == "" || v.Spec.NodeID != "" || v.Status.State != longhorn.VolumeStateDetached {
		return "", ""
	}
	nodes := map[string]bool{}
	for _, t := range va.CSITickets() {
		nodes[t.NodeID] = true
	}
	if len(nodes) != 2 || !nodes[target] || nodes[""] {
		return "", ""
	}
	for n := range nodes {
		if n != target {
			source = n
		}
	}
	return source, target
}
