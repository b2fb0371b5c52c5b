package detect

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// staleMigrationNodeID: status.currentMigrationNodeID stays set on a
// volume that is detached or detaching (longhorn#11479, #12238,
// harvester#8904; up to 1.9.1). processMigration returns early without
// spec.nodeID, so nothing clears it; meanwhile Longhorn treats the volume
// as migrating (isVolumeMigrating): no replica clean-up or rebuild, and the
// VolumeAttachment controller leaves detachment to the migration code,
// which loops with "cannot find the current engine for the switching".
func staleMigrationNodeID(c *familyCtx, f *Finding) bool {
	v := c.v
	cm := v.Status.CurrentMigrationNodeID
	if cm == "" || v.Spec.MigrationNodeID != "" {
		return false
	}
	switch {
	case v.Spec.NodeID == "":
	case v.Status.State == longhorn.VolumeStateDetached || v.Status.State == longhorn.VolumeStateDetaching:
	default:
		return false
	}
	k := FamilyInfo{
		Issues:          []string{"longhorn/longhorn#11479", "longhorn/longhorn#12238", "harvester/harvester#8904"},
		Releases:        "1.5.0–1.9.1 (fixed in 1.9.2 and 1.10.0)",
		AffectedRelease: c.inRange("1.5.0", "1.9.1"),
	}
	stop, start := c.stopWorkload()
	k.Steps = []string{
		stop,
		c.kubectl(fmt.Sprintf(`patch volumes.longhorn.io %s --subresource=status --type=merge -p '{"status":{"currentMigrationNodeID":""}}'`, v.Name)),
		start,
	}
	// The fixed releases' finish still needs an engine to keep: with the
	// one engine inactive and on no node it finds none and the field stays
	// (Longhorn 1.12.0, explorer seed 37 state 10).
	noEngine := v.Spec.NodeID == "" && v.Status.CurrentNodeID == "" && detachedFinishFails(v, c.engines)
	if c.st.Version.Known() && atLeast(c.st.Version, "1.9.2") && !noEngine {
		// Seen on Longhorn 1.10.0's own controller (internal/explore E19):
		// the fixed releases clear the field themselves.
		c.setWait(f, TypeStaleMigrationNodeID,
			fmt.Sprintf("status.currentMigrationNodeID is %s on a volume that is %s (spec.nodeID %q, no migration requested): Longhorn %s clears the field itself; if it lasts, see the steps",
				cm, orNone(v.Status.State), v.Spec.NodeID, c.st.Version), k, "stale-currentmigrationnodeid")
		return true
	}
	if noEngine && atLeast(c.st.Version, "1.9.2") {
		reason := fmt.Sprintf("status.currentMigrationNodeID is %s on a volume that is %s (no migration requested), and Longhorn %s's finish finds no engine to keep among %s: every sync fails with \"cannot find the current engine for the switching\" and the field stays; with the workload stopped, clear the field on the status subresource (see the steps)",
			cm, orNone(v.Status.State), c.st.Version, enginesWhere(c.engines))
		c.set(f, TypeStaleMigrationNodeID, SeverityWarning, reason, k, "stale-currentmigrationnodeid")
		return true
	}
	reason := fmt.Sprintf("status.currentMigrationNodeID is %s on a volume that is %s (spec.nodeID %q, no migration requested): Longhorn still treats it as migrating and does not clear the field while the volume stays detached (longhorn#11479: it flaps between detaching and detached, log \"cannot find the current engine for the switching\"); with the workload stopped, clear the field on the status subresource",
		cm, orNone(v.Status.State), v.Spec.NodeID)
	c.set(f, TypeStaleMigrationNodeID, SeverityWarning, reason, k, "stale-currentmigrationnodeid")
	if k.AffectedRelease {
		staleCMNRepair(c, f) // family_fix.go: fix clears it where proven
	}
	return true
}
