package realtest

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// ticketLimitRelease: the releases of longhorn#11555 and #11150, whose
// VolumeAttachment webhook counts every ticket of a migratable volume
// against its limit of two (1.7.0–1.10.x; from 1.11.0 only csi tickets
// count).
func ticketLimitRelease(rel string) bool { return between(rel, "1.7.0", "1.10.999") }

// backupTicket is the ticket Longhorn's backup controller adds for Backup
// "backup-1" (GetAttachmentTicketID: "<type>-<name>").
const backupTicket = "backup-controller-backup-1"

// backupInProgress attaches vol to node-a and adds the ticket Longhorn's
// backup controller adds while Backup backup-1 of vol runs (1.10.0
// backup_controller.go: type backup-controller, the volume's owner node,
// disableFrontend "any"; the BackupController does not run here, so the
// test writes it), and waits until Longhorn's VolumeAttachment controller
// has satisfied it on node-a.
func (e *env) backupInProgress(vol string) {
	e.t.Helper()
	e.attached(vol)
	v, _, _ := e.state(vol)
	e.addTicket(vol, backupTicket, "backup-controller", v.Status.OwnerID, "any")
	e.await("Longhorn satisfies the backup ticket on node-a", func() bool { return e.va(vol).Satisfied(backupTicket) })
}

// TestFamilyMigrationBlockedByTickets: a Backup in progress on a
// migratable volume (its backup-controller ticket beside the workload's csi
// ticket for node-a) and a drain that migrates the volume to node-b. The
// refusal is the validating webhook's, which this harness does not run:
// lhsim applies its rule to the CSI attach (v1.10.0
// verifyTicketCountForMigratableVolume: more than two tickets of any type on
// a migratable volume are refused), so the refusal here is simulated, and
// what is Longhorn's own is the rest: the volume stays on node-a with both
// tickets satisfied, and scan reports MigrationBlockedByTickets naming the
// Backup. The repair is to let the Backup finish: its controller then
// removes its ticket (played here), the drain's attach is admitted, and
// Longhorn's own controllers migrate the volume to node-b and, on the
// confirm, settle it there with nothing lost.
func TestFamilyMigrationBlockedByTickets(t *testing.T) {
	t.Parallel()
	onEachRelease(t, ticketLimitRelease, func(t *testing.T, e *env, rel string) {
		const vol = "vol-blocked-tickets"
		e.backupInProgress(vol)
		attachB := func() error { return e.sim.Attach(e.ctx, vol, nodeB) }
		if err := attachB(); err == nil || !strings.Contains(err.Error(), "cannot attach migratable volume "+vol+" to more than two nodes") {
			t.Fatalf("the drain's attach to node-b with a backup ticket in place: %v, want the webhook's refusal", err)
		}
		e.stays("the volume stays on node-a, no migration", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return settled(nodeA)(v, es, rs) && v.Spec.MigrationNodeID == "" && e.va(vol).Satisfied(backupTicket)
		}, "")
		if err := attachB(); err == nil {
			t.Fatal("the drain's attach to node-b was admitted with the backup ticket still in place")
		}
		f := e.familyFinding(vol, string(detect.TypeMigrationBlockedByTickets))
		if !strings.Contains(f.Reason, backupTicket) {
			t.Errorf("scan's reason %q does not name the backup ticket", f.Reason)
		}
		if typ, node, sat := e.ticket(f, backupTicket); typ != "backup-controller" || node != nodeA || !sat {
			t.Errorf("scan's evidence of the backup ticket: %s on %s satisfied=%t, want backup-controller on node-a, satisfied", typ, node, sat)
		}
		e.step(f, "get backups.longhorn.io backup-1 -o yaml")
		e.step(f, "never delete a backup-* or snapshot ticket")
		// The Backup finishes: Longhorn's backup controller removes its
		// ticket (the BackupController does not run here).
		e.removeTicket(vol, backupTicket)
		e.attach(vol, nodeB)
		e.migrationReady(vol)
		e.detach(vol, nodeA) // the drain's confirm
		e.waitFor("migrated to node-b", vol, settled(nodeB))
		e.assertNoDamage(vol)
		if out, errOut, code := e.plugin("scan", vol); code != 0 {
			t.Errorf("scan after the migration: exit %d\n%s%s", code, out, errOut)
		}
	})
}

// TestFamilyTicketLimitIsTheWebhooks pins where the block of longhorn#11555
// lives: Longhorn's own VolumeAttachment controller does not count tickets
// (1.10.0 handleVolumeMigrationStart looks for a csi ticket on the volume's
// node and one on another node only). With the backup ticket in place and
// the migration's csi ticket written past the webhook, which does not run
// here, the controllers start the migration and make it ready.
func TestFamilyTicketLimitIsTheWebhooks(t *testing.T) {
	t.Parallel()
	onEachRelease(t, ticketLimitRelease, func(t *testing.T, e *env, rel string) {
		const vol = "vol-tickets-past-webhook"
		e.backupInProgress(vol)
		e.addTicket(vol, longhorn.CSITicketID(vol, nodeB), longhorn.AttacherTypeCSI, nodeB, "false")
		e.migrationReady(vol)
		if va := e.va(vol); len(va.Spec.AttachmentTickets) != 3 || !va.Satisfied(backupTicket) {
			t.Errorf("tickets %v, want the backup ticket still satisfied beside both csi tickets", va.Spec.AttachmentTickets)
		}
	})
}
