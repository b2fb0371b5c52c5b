package detect

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TypeMigrationCrashDetached is the state Longhorn 1.7+ leaves a migratable
// volume in when the engine serving a live migration's source crashed or
// its node was lost: Longhorn cancels the migration, detaches the volume
// (event MigrationFailed: "detach volume from extra node to resume") and
// does not attach it again while csi-attacher tickets for two nodes are in
// place. Removing one of them resumes it on the other node.
const TypeMigrationCrashDetached Type = "MigrationCrashDetached"

// CrashDetachedNodes returns the nodes of the csi-attacher tickets that hold
// a volume in the crash-detached state, sorted, or nil when it is not in it.
// The rule is Longhorn's own (VolumeAttachment controller, 1.7+): a
// migratable volume that is fully detached is not attached again while two
// or more tickets of the highest priority present are csi-attacher tickets.
func CrashDetachedNodes(ver longhorn.Version, v *longhorn.Volume, va *longhorn.VolumeAttachment) []string {
	if !ver.AtLeast(1, 7, 0) || va == nil || !v.Spec.Migratable {
		return nil
	}
	if v.Spec.NodeID != "" || v.Spec.MigrationNodeID != "" || v.Status.CurrentMigrationNodeID != "" {
		return nil
	}
	// A ticket of a higher priority than csi-attacher (restore, expansion,
	// longhorn-api) is attached first: not this state.
	for _, t := range va.Spec.AttachmentTickets {
		switch t.Type {
		case "volume-restore-controller", "volume-expansion-controller", "longhorn-api":
			return nil
		}
	}
	if len(va.CSITickets()) < 2 {
		return nil
	}
	return va.CSITicketNodes()
}

// crashDetached fills f when v is in the crash-detached state.
func crashDetached(st *longhorn.State, v *longhorn.Volume, va *longhorn.VolumeAttachment, f *Finding) bool {
	nodes := CrashDetachedNodes(st.Version, v, va)
	if nodes == nil {
		return false
	}
	f.Type, f.Severity = TypeMigrationCrashDetached, SeverityWarning
	f.Reason = fmt.Sprintf("a live migration between %s failed (an engine crashed or a node was lost): Longhorn %s detached the volume and will not attach it again until one of the csi-attacher tickets is removed; "+
		"keep the node the workload should run on (`migrate confirm VOLUME --to NODE` keeps NODE, `migrate rollback VOLUME --to NODE` keeps the other), never one that is down (docs/commands/kubectl_longhorn-engines_migrate_confirm.md)",
		strings.Join(nodes, " and "), st.Version)
	return true
}
