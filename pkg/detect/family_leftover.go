package detect

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// LonghornUITicket is the ticket id the 1.4→1.5 upgrade gives a volume
// that was attached with no CSI attachment (LM upgrade/v14xto150).
const LonghornUITicket = "longhorn-ui"

// leftoverAttachRequest: a detached volume keeps status.pendingNodeID
// (auto-attachment then never runs), or a longhorn-ui ticket left by the
// 1.5 upgrade keeps the volume on its node while the workload's csi ticket
// asks for another one (longhorn#7994, #8339).
func leftoverAttachRequest(c *familyCtx, f *Finding) bool {
	v := c.v
	k := FamilyInfo{
		Issues:          []string{"longhorn/longhorn#7994", "longhorn/longhorn#8339"},
		Releases:        "1.5.x",
		AffectedRelease: c.inRange("1.5.0", "1.5.999"),
	}
	// Before 1.5 the volume controller attaches a detached volume to
	// status.pendingNodeID by itself and clears it (the automatic
	// re-attachment of 1.4.3's syncVolumeStatusWithEngineState; the
	// explorer saw 1.4.3 leave it, seed 28 states 211, 224, 322): a leftover
	// needs the VolumeAttachment controller of 1.5.
	reattaches := c.st.Version.Known() && !c.st.Version.HasVolumeAttachments()
	if pn := v.Status.PendingNodeID; pn != "" && v.Spec.NodeID == "" && v.Status.State == longhorn.VolumeStateDetached && !reattaches {
		k.Steps = []string{
			c.kubectl(fmt.Sprintf(`patch volumes.longhorn.io %s --subresource=status --type=merge -p '{"status":{"pendingNodeID":""}}'`, v.Name)),
		}
		c.set(f, TypeLeftoverAttachRequest, SeverityWarning,
			fmt.Sprintf("the volume is detached but status.pendingNodeID is still %s: Longhorn waits for a re-attachment that never comes and does not attach the volume elsewhere; clear the field on the status subresource", pn),
			k, "leftover-pendingnodeid-or-longhorn-ui-ticket")
		return true
	}
	// Before 1.5 that re-attachment goes to status.pendingNodeID whatever
	// spec.nodeID says: with the two apart the volume ends attached off
	// spec.nodeID, its one engine there (Longhorn 1.4.3, explorer seed 45
	// states 1996 and 2625). With two engines the finish rows say where
	// the volume ends.
	if pn := v.Status.PendingNodeID; reattaches && pn != "" && v.Spec.NodeID != "" && pn != v.Spec.NodeID && v.Spec.MigrationNodeID == "" && len(c.engines) == 1 {
		k.Releases, k.AffectedRelease = "1.4.x and before (run on 1.4.3)", true
		k.Steps = []string{c.kubectl("get volumes.longhorn.io " + v.Name + " -o yaml")}
		c.set(f, TypeLeftoverAttachRequest, SeverityWarning,
			fmt.Sprintf("status.pendingNodeID is %s while spec.nodeID is %s: once the volume is detached Longhorn %s attaches it again on %s, not on spec.nodeID, and it stays there, its engine off spec.nodeID; do not delete engines or replicas by hand", pn, v.Spec.NodeID, c.st.Version, pn),
			k, "leftover-pendingnodeid-or-longhorn-ui-ticket")
		return true
	}
	if c.va == nil {
		return false
	}
	ui, ok := c.va.Spec.AttachmentTickets[LonghornUITicket]
	if !ok {
		return false
	}
	for _, t := range c.va.CSITickets() {
		if t.NodeID == ui.NodeID || c.va.Satisfied(t.ID) {
			continue
		}
		k.Steps = []string{
			c.kubectl("get volumeattachments.longhorn.io " + v.Name + " -o yaml"),
			c.kubectl(fmt.Sprintf(`patch volumeattachments.longhorn.io %s --type=json -p '[{"op":"remove","path":"/spec/attachmentTickets/%s"}]'`, v.Name, LonghornUITicket)),
		}
		c.set(f, TypeLeftoverAttachRequest, SeverityWarning,
			fmt.Sprintf("attachment ticket %s (an attach from the Longhorn UI, or left by the upgrade to 1.5) keeps the volume on %s while csi ticket %s for %s waits unsatisfied: the workload cannot attach it there; remove the %s ticket",
				LonghornUITicket, orNone(ui.NodeID), t.ID, t.NodeID, LonghornUITicket),
			k, "leftover-pendingnodeid-or-longhorn-ui-ticket")
		return true
	}
	return false
}
