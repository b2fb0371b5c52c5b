package detect

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// migrationBlockedByTickets: on 1.7–1.10 Longhorn's VolumeAttachment
// webhook refuses a third ticket on a migratable volume, counting every
// ticket, so a backup or snapshot ticket beside the workload's csi ticket
// makes the migration's ticket the third: "cannot attach migratable volume
// … to more than two nodes", and the drain hangs (longhorn#11555, #11150,
// harvester#7067). From 1.11.0 only csi tickets count.
func migrationBlockedByTickets(c *familyCtx, f *Finding) bool {
	v := c.v
	ver := c.st.Version
	if !ver.TicketLimits() || ver.TicketLimitCountsCSIOnly() || !v.Migratable() ||
		v.Status.State != longhorn.VolumeStateAttached {
		return false
	}
	csi, other := c.tickets()
	if len(other) == 0 || len(csi)+len(other) < 2 {
		return false
	}
	k := FamilyInfo{
		Issues:          []string{"longhorn/longhorn#11555", "longhorn/longhorn#11150", "harvester/harvester#7067"},
		Releases:        "1.7.0–1.10.x (from 1.11.0 only csi tickets count)",
		AffectedRelease: c.inRange("1.7.0", "1.10.999"),
	}
	for _, t := range other {
		if cr := ticketObject(t); cr != "" {
			k.Steps = append(k.Steps, c.kubectl("get "+cr+" -o yaml   # why is it not finished?"))
		}
	}
	k.Steps = append(k.Steps,
		"resolve the stuck Backup or Snapshot (let it finish, or cancel it as docs/troubleshooting-migration-family.md says); never delete a backup-* or snapshot ticket from the VolumeAttachment directly",
		c.kubectl("get volumeattachments.longhorn.io "+v.Name+" -o yaml   # only the csi tickets are left"))
	reason := fmt.Sprintf("the volume has %d attachment tickets, %d of them not csi (%s): Longhorn %s counts every ticket against the two-node limit of a migratable volume, so the migration a drain starts is refused (\"cannot attach migratable volume %s to more than two nodes\") and the drain hangs",
		len(csi)+len(other), len(other), ticketList(other), ver, v.Name)
	c.set(f, TypeMigrationBlockedByTickets, SeverityWarning, reason, k, "tickets-that-block-a-migration")
	return true
}

// ticketObject is the Longhorn object a controller's ticket stands for
// ("backups.longhorn.io NAME"): ticket ids are "<type>-<name>"
// (GetAttachmentTicketID).
func ticketObject(t longhorn.AttachmentTicket) string {
	kinds := map[string]string{"backup-controller": "backups.longhorn.io", "snapshot-controller": "snapshots.longhorn.io"}
	kind, ok := kinds[t.Type]
	if !ok {
		return ""
	}
	name := strings.TrimPrefix(t.ID, t.Type+"-")
	if name == t.ID || name == "" {
		return ""
	}
	return kind + " " + name
}
