package detect

import (
	"fmt"
	"strings"
)

// upgradeMigrationDeadlock: an engine image upgrade is pending while the
// volume has two engines (longhorn#7833). Longhorn skips migration
// processing while the volume upgrades, and the upgrade waits for the one
// engine: neither finishes. Fixed by "Don't automatically upgrade engines
// while migrating" in 1.4.5, 1.5.4, 1.6.1 and 1.7.0.
func upgradeMigrationDeadlock(c *familyCtx, f *Finding) bool {
	v := c.v
	if !v.UpgradePending() {
		return false
	}
	var live, inactive []string
	for _, e := range c.engines {
		if e.Deleting() {
			continue
		}
		live = append(live, e.Name)
		if !e.Spec.Active && e.Spec.NodeID != v.Status.CurrentNodeID {
			inactive = append(inactive, e.Name)
		}
	}
	if len(live) < 2 {
		return false
	}
	k := FamilyInfo{
		Issues:          []string{"longhorn/longhorn#7833"},
		Releases:        "1.4.0–1.4.4, 1.5.0–1.5.3, 1.6.0 (fixed in 1.4.5, 1.5.4, 1.6.1, 1.7.0)",
		AffectedRelease: c.inRange("1.4.0", "1.4.4") || c.inRange("1.5.0", "1.5.3") || c.inRange("1.6.0", "1.6.0"),
	}
	k.Steps = []string{c.csiAttachmentsCmd()}
	if c.st.Version.HasVolumeAttachments() {
		k.Steps = append(k.Steps, c.kubectl("get volumeattachments.longhorn.io "+v.Name+" -o yaml   # which ticket is not satisfied"))
	}
	// Rolling the upgrade back (the volume's image set back to
	// status.currentImage) lets processMigration run again: Longhorn 1.4.3's
	// and 1.5.3's own controllers then finished the migration, and the
	// upgrade picked again once one engine was left completed. The
	// maintainers' delete of the inactive engine let them finish the
	// upgrade but not a migration the drain had confirmed
	// (internal/realtest, TestFamilyUpgradeMigrationDeadlock*).
	field := "engineImage"
	if v.Spec.Image != "" {
		field = "image"
	}
	k.Steps = append(k.Steps, c.kubectl(fmt.Sprintf(`patch volumes.longhorn.io %s --type=merge -p '{"spec":{%q:%q}}'   # roll the engine upgrade back: Longhorn then finishes the migration`, v.Name, field, v.Status.CurrentImage)))
	del := "find the inactive extra engine that is not on status.currentNodeID (" + c.kubectl("get engines.longhorn.io -l longhornvolume="+v.Name+" -o wide") + ") and delete it"
	if len(inactive) == 1 {
		del = c.kubectl("delete engines.longhorn.io " + inactive[0])
		f.Stale = inactive
	}
	k.Steps = append(k.Steps,
		"only if the upgrade cannot be rolled back, the workaround of longhorn/longhorn#7833: "+del+"; once the drain has confirmed the migration, Longhorn then finishes the upgrade but not the migration (docs/troubleshooting-migration-family.md)",
		"set the setting concurrent-automatic-engine-upgrade-per-node-limit to 0 until every migration has finished, then upgrade the volume's engine again")
	reason := fmt.Sprintf("an engine upgrade is pending (image %q, current %q) while the volume has %d engines (%s): Longhorn does not process the migration while the volume upgrades and the upgrade waits for one engine, so neither finishes",
		v.WantedImage(), v.Status.CurrentImage, len(live), strings.Join(live, ", "))
	c.set(f, TypeUpgradeMigrationDeadlock, SeverityWarning, reason, k, "engine-upgrade-deadlocked-with-a-migration")
	if v.Spec.MigrationNodeID != "" {
		markMigration(f, v.Spec.MigrationNodeID)
	}
	return true
}
