package detect

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// migrationNeverConfirmed: the migration is ready (both engines running,
// both csi tickets satisfied) but no pod is left on the old node, so
// nothing removes the old node's ticket and the migration is never
// confirmed; often an orphaned Kubernetes VolumeAttachment for the old
// node is what holds the ticket (longhorn#11149). The drain of either
// node hangs. The repair stops the workload, so fix never does it.
func migrationNeverConfirmed(c *familyCtx, f *Finding) bool {
	v := c.v
	from, to := v.Spec.NodeID, v.Spec.MigrationNodeID
	if to == "" || from == "" || c.va == nil {
		return false
	}
	old, mig := c.engineOn(from), c.engineOn(to)
	if old == nil || mig == nil || !old.Spec.Active || old.Status.CurrentState != longhorn.StateRunning ||
		mig.Status.CurrentState != longhorn.StateRunning {
		return false
	}
	var onFrom, onTo bool
	for _, t := range c.va.CSITickets() {
		if !c.va.Satisfied(t.ID) {
			continue
		}
		onFrom = onFrom || t.NodeID == from
		onTo = onTo || t.NodeID == to
	}
	if !onFrom || !onTo {
		return false
	}
	pods, read := c.podsOn(from)
	if !read || len(pods) > 0 {
		// pods on the old node (or not known): a VM migration in flight
		return false
	}
	var orphan *longhorn.CSIAttachment
	for _, a := range c.st.Workloads.CSIAttachmentsOf(v) {
		if a.NodeName == from {
			a := a
			orphan = &a
		}
	}
	k := FamilyInfo{
		Issues:          []string{"longhorn/longhorn#11149"},
		Releases:        "1.7.x (reported); the same state is possible on every release with VolumeAttachments (1.5+)",
		AffectedRelease: c.inRange("1.7.0", "1.7.999"),
	}
	stop, start := c.stopWorkload()
	vaName := longhorn.CSITicketID(v.Name, from)
	if orphan != nil {
		vaName = orphan.Name
	}
	k.Steps = []string{
		c.csiAttachmentsCmd(),
		fmt.Sprintf("kubectl delete volumeattachments.storage.k8s.io %s   # the orphaned attachment for the old node %s", vaName, from),
		stop,
		c.csiAttachmentsCmd() + "   # wait until neither attachment is left",
		start,
	}
	reason := fmt.Sprintf("live migration from %s to %s is ready (engines %s and %s running, both csi tickets satisfied) but no pod using the volume runs on %s any more: nothing confirms it and draining either node hangs",
		from, to, old.Name, mig.Name, from)
	if orphan != nil {
		reason += fmt.Sprintf("; Kubernetes VolumeAttachment %s still attaches the volume to %s (orphaned)", orphan.Name, from)
	}
	reason += "; the repair stops the workload, fix does not do it"
	c.set(f, TypeMigrationNeverConfirmed, SeverityWarning, reason, k, "migration-never-confirmed")
	f.Keep = old.Name
	markRoles(f, old.Name, nil)
	markMigration(f, to)
	return true
}
