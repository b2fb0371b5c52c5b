package realtest

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// leftoverRelease: the releases of longhorn#7994 and #8339 (1.5.x).
func leftoverRelease(rel string) bool { return between(rel, "1.5.0", "1.5.999") }

// TestFamilyLeftoverPendingNodeID: a detached volume left with
// status.pendingNodeID (what a 1.4 re-attachment after an engine crash
// leaves, brought along by the upgrade to 1.5; written here on the status
// subresource while the controllers are paused). 1.5's VolumeAttachment
// controller attaches only a volume that is fully detached, pendingNodeID
// empty included (isVolumeFullyDetached), and nothing in 1.5.3 clears the
// field: the workload's attach request for node-b is never served. scan
// reports LeftoverAttachRequest with the status patch of longhorn#7994;
// run as printed, it lets Longhorn attach the volume on node-b, with
// nothing lost.
func TestFamilyLeftoverPendingNodeID(t *testing.T) {
	t.Parallel()
	onEachRelease(t, leftoverRelease, func(t *testing.T, e *env, rel string) {
		const vol = "vol-leftover-pending"
		e.attached(vol)
		e.detach(vol, nodeA)
		e.waitFor("detached", vol, detached)
		e.patchPaused(longhorn.Volumes, vol, `{"status":{"pendingNodeID":"`+nodeA+`"}}`, "status")
		e.attach(vol, nodeB)
		ticket := longhorn.CSITicketID(vol, nodeB)
		e.await("Longhorn has seen node-b's ticket", func() bool {
			va := e.va(vol)
			st, ok := va.Status.AttachmentTicketStatuses[ticket]
			return ok && st.Generation == va.Spec.AttachmentTickets[ticket].Generation
		})
		e.stays("the volume stays detached with node-b's ticket unsatisfied", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
			return detached(v, nil, nil) && v.Status.PendingNodeID == nodeA && !e.va(vol).Satisfied(ticket)
		}, "")
		f := e.familyFinding(vol, string(detect.TypeLeftoverAttachRequest))
		if !strings.Contains(f.Reason, "status.pendingNodeID is still "+nodeA) || f.Evidence.NodeID != "" || f.Evidence.CurrentNodeID != "" {
			t.Errorf("scan: reason %q, evidence nodeID %q currentNodeID %q; want the leftover field named on a detached volume", f.Reason, f.Evidence.NodeID, f.Evidence.CurrentNodeID)
		}
		e.runStep(e.step(f, `'{"status":{"pendingNodeID":""}}'`, "--subresource=status", "volumes.longhorn.io "+vol))
		e.waitFor("Longhorn attaches the volume on node-b after the step", vol, settled(nodeB))
		e.await("node-b's ticket satisfied", func() bool { return e.va(vol).Satisfied(ticket) })
		e.assertNoDamage(vol)
		if out, errOut, code := e.plugin("scan", vol); code != 0 {
			t.Errorf("scan after the step: exit %d\n%s%s", code, out, errOut)
		}
	})
}

// TestFamilyLeftoverUITicket: the longhorn-ui ticket the upgrade to 1.5
// gives a volume attached with no Kubernetes VolumeAttachment (upgrade
// v14xto150: id longhorn-ui, type longhorn-api, the volume's node; written
// here as the upgrade writes it), then the workload's csi ticket for
// node-b. The longhorn-api ticket outranks csi ones and keeps the volume on
// node-a (shouldDoDetach finds a ticket there); no migration starts, as no
// csi ticket asks for node-a. scan reports LeftoverAttachRequest with the
// ticket's removal (longhorn#8339); run as printed, Longhorn detaches the
// volume from node-a and attaches it on node-b, with nothing lost.
func TestFamilyLeftoverUITicket(t *testing.T) {
	t.Parallel()
	onEachRelease(t, leftoverRelease, func(t *testing.T, e *env, rel string) {
		const vol = "vol-leftover-ui"
		if err := e.sim.CreateVolume(e.ctx, vol, lhsim.VolumeOptions{Migratable: true, Replicas: 2}); err != nil {
			t.Fatal(err)
		}
		e.waitFor("volume created and detached", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return v.Status.State == longhorn.VolumeStateDetached && len(es) == 1 && len(rs) >= 2
		})
		e.addTicket(vol, detect.LonghornUITicket, longhorn.AttacherTypeLonghornAPI, nodeA, "false")
		e.waitFor("attached to node-a by the longhorn-ui ticket", vol, settled(nodeA))
		e.attach(vol, nodeB)
		ticket := longhorn.CSITicketID(vol, nodeB)
		e.await("Longhorn has seen node-b's ticket", func() bool {
			va := e.va(vol)
			st, ok := va.Status.AttachmentTicketStatuses[ticket]
			return ok && st.Generation == va.Spec.AttachmentTickets[ticket].Generation && !st.Satisfied
		})
		e.stays("the volume stays on node-a with node-b's ticket unsatisfied", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return settled(nodeA)(v, es, rs) && !e.va(vol).Satisfied(ticket)
		}, "")
		f := e.familyFinding(vol, string(detect.TypeLeftoverAttachRequest))
		if !strings.Contains(f.Reason, ticket) {
			t.Errorf("scan's reason %q does not name node-b's ticket", f.Reason)
		}
		if typ, node, sat := e.ticket(f, detect.LonghornUITicket); typ != longhorn.AttacherTypeLonghornAPI || node != nodeA || !sat {
			t.Errorf("scan's evidence of the longhorn-ui ticket: %s on %s satisfied=%t, want longhorn-api on node-a, satisfied", typ, node, sat)
		}
		if _, node, sat := e.ticket(f, ticket); node != nodeB || sat {
			t.Errorf("scan's evidence of node-b's ticket: on %s satisfied=%t, want node-b, unsatisfied", node, sat)
		}
		e.runStep(e.step(f, `"op":"remove"`, "/spec/attachmentTickets/"+detect.LonghornUITicket))
		e.waitFor("Longhorn attaches the volume on node-b after the step", vol, settled(nodeB))
		e.await("node-b's ticket satisfied", func() bool { return e.va(vol).Satisfied(ticket) })
		e.assertNoDamage(vol)
		if out, errOut, code := e.plugin("scan", vol); code != 0 {
			t.Errorf("scan after the step: exit %d\n%s%s", code, out, errOut)
		}
		if got := e.csiTicketsOn(vol); len(got) != 1 || got[0] != nodeB {
			t.Errorf("csi tickets on %v, want node-b's alone", got)
		}
	})
}
