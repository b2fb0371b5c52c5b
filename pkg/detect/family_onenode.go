package detect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// enginesOnOneNodeProven are the releases whose own controllers converged
// after fix deleted the inactive engine, with nothing lost, also when
// interrupted (internal/explore fixtures). Lift only with such a run.
var enginesOnOneNodeProven = []longhorn.Version{{Major: 1, Minor: 4, Patch: 3}, {Major: 1, Minor: 5, Patch: 3}}

// enginesOnOneNode: Longhorn is finishing a confirm or rollback (no
// migration requested, two engines or status.currentMigrationNodeID set),
// but two engines sit on the node it switches to, so its datastore fails
// at every sync with "BUG: found the second new active engine" and the
// migration never ends; meanwhile the volume counts as migrating and can
// neither detach nor migrate again. Seen on Longhorn 1.5.3's own
// controllers after the source engine crashed mid-migration: detaching,
// the VolumeAttachment controller confirmed toward the target, and the
// volume controller attached the old, active engine there, beside the
// migration engine (internal/realtest TestMigrateResumesWithoutNodeOnLonghorn).
func enginesOnOneNode(c *familyCtx, f *Finding) bool {
	v, ver := c.v, c.st.Version
	if !ver.Known() || !v.Migratable() || v.Spec.MigrationNodeID != "" || v.Spec.NodeID == "" || v.Status.CurrentNodeID == "" {
		return false
	}
	if v.UpgradePending() || !v.RobustnessUsable() {
		// processMigration skips the volume (an upgrade is the upgrade
		// deadlock's to report), or Longhorn salvages a faulted one first
		return false
	}
	if len(c.engines) < 2 && v.Status.CurrentMigrationNodeID == "" {
		return false // processMigration has nothing to finish
	}
	var on []*longhorn.Engine
	for _, e := range switchCandidates(ver, v, c.engines) {
		if ver.AtLeast(1, 8, 0) && e.Deleting() {
			continue // skipped there
		}
		on = append(on, e)
	}
	if len(on) < 2 {
		return false
	}
	names := make([]string, len(on))
	for i, e := range on {
		names[i] = fmt.Sprintf("%s on %s", e.Name, e.Spec.NodeID)
	}
	k := FamilyInfo{
		// no upstream issue known: found running Longhorn 1.5.3's own controllers
		Issues:          []string{},
		Releases:        "1.2.3 and later (the engine switch refuses two candidates); seen on 1.5.3",
		AffectedRelease: true,
		Steps:           []string{c.kubectl("get engines.longhorn.io -l longhornvolume=" + v.Name + " -o wide")},
	}
	reason := fmt.Sprintf("stuck: Longhorn is finishing a confirm or rollback (spec.nodeID %s, status.currentMigrationNodeID %q) but %s are candidates to be the volume's engine; every sync fails with \"BUG: found the second new active engine\", so the migration never ends and the volume can neither detach nor migrate again",
		v.Spec.NodeID, v.Status.CurrentMigrationNodeID, strings.Join(names, " and "))
	c.set(f, TypeEnginesOnOneNode, SeverityWarning, reason, k, "engines-on-one-node")
	enginesOnOneNodeRepair(c, f, on)
	return true
}

// The preconditions of deleting the extra engine of an EnginesOnOneNode
// volume, in the order they are checked (docs/scan-report.md).
const (
	CheckOneServingEngine = "one active engine serves the volume"
	CheckExtraIdle        = "the engines to delete are inactive and own no active replica"
)

// enginesOnOneNodeRepair decides whether fix deletes the inactive engines
// among the candidates: Longhorn serves the volume from its one active
// engine (its current engine), so once the others are gone it takes that
// one, ends the migration and removes the inactive clone replicas itself,
// which share their directories with the active ones and are not wiped.
func enginesOnOneNodeRepair(c *familyCtx, f *Finding, on []*longhorn.Engine) {
	v, ver := c.v, c.st.Version
	var cs checks
	cs.versionKnown(c.st)
	failure := fmt.Sprintf("deleting the extra engine is proven on the own controllers of Longhorn %s only, not on %s: fix does not write, follow the steps by hand (%s)",
		versionList(enginesOnOneNodeProven), ver, FamilyDoc+"#engines-on-one-node")
	if v.DataEngineName() != longhorn.DataEngineV1 {
		failure = "this is a " + v.DataEngineName() + " volume: the repair is proven for v1 volumes only; follow the steps by hand"
	}
	cs.add(CheckRepairProven, provenOn(enginesOnOneNodeProven, ver) && v.DataEngineName() == longhorn.DataEngineV1, failure,
		fmt.Sprintf("Longhorn %s, %s volume (proven on %s)", ver, v.DataEngineName(), versionList(enginesOnOneNodeProven)))

	var active []*longhorn.Engine
	for _, e := range c.engines {
		if e.IsActive() {
			active = append(active, e)
		}
	}
	var keep *longhorn.Engine
	if len(active) == 1 && slices.Contains(on, active[0]) && active[0].Status.CurrentState == longhorn.StateRunning &&
		active[0].Spec.NodeID == v.Status.CurrentNodeID && v.Spec.NodeID == v.Status.CurrentNodeID &&
		slices.ContainsFunc(c.replicas, func(r *longhorn.Replica) bool {
			return r.Spec.EngineName == active[0].Name && r.Spec.Active && r.Spec.FailedAt == "" && r.Spec.HealthyAt != "" && r.DeletionTimestamp == nil
		}) {
		keep = active[0]
	}
	serving := ""
	if keep != nil {
		serving = fmt.Sprintf("%s, running on %s", keep.Name, keep.Spec.NodeID)
	}
	cs.add(CheckOneServingEngine, keep != nil,
		fmt.Sprintf("no single active engine runs on %s with a healthy active replica of its own (active engines: %s): which engine serves the volume is not clear; follow the steps by hand", v.Status.CurrentNodeID, orNone(strings.Join(engineNames(active), ", "))),
		serving)

	var stale []string
	idle := keep != nil
	why := ""
	for _, e := range on {
		if e == keep {
			continue
		}
		stale = append(stale, e.Name)
		switch {
		case e.Spec.Active || e.Deleting():
			idle, why = false, fmt.Sprintf("%s is active or being deleted", e.Name)
		case slices.ContainsFunc(c.replicas, func(r *longhorn.Replica) bool { return r.Spec.EngineName == e.Name && r.Spec.Active }):
			idle, why = false, fmt.Sprintf("an active replica names %s", e.Name)
		}
	}
	cs.add(CheckExtraIdle, idle, orText(why, "the engine to keep is unknown"), "inactive: "+strings.Join(stale, ", "))
	cs.migrationNotStarted(v, c.engines)

	f.Preconditions = cs
	k := f.Family
	if keep != nil {
		f.Keep, f.Stale = keep.Name, stale
		markRoles(f, keep.Name, stale)
		for _, s := range stale {
			k.Steps = append(k.Steps, c.kubectl("delete engines.longhorn.io "+s)+
				"   # the inactive engine beside "+keep.Name+", which serves the volume: Longhorn then ends the migration on "+keep.Name+" and removes the inactive clone replicas itself")
		}
	} else {
		k.Steps = append(k.Steps, fmt.Sprintf("no single engine is known to serve the volume: do not delete any engine or replica; collect a support bundle (see %s)", FamilyDoc+"#engines-on-one-node"))
	}
	if failed := firstFailed(cs); failed != nil {
		f.Reason += "; fix does not repair it: " + failed.Failure
		return
	}
	f.Action = ActionDelete
	f.Reason += fmt.Sprintf("; fix deletes the inactive engine %s (pinned to its uid and resourceVersion) and keeps %s, which serves the volume; Longhorn then ends the migration itself", strings.Join(stale, ", "), keep.Name)
	if to := f.PendingMigration(); to != "" {
		f.Reason += fmt.Sprintf(", then starts one to %s, whose csi-attacher ticket is still in place: confirm or roll it back as any other (kubectl longhorn-engines migrate confirm|rollback %s)", to, v.Name)
	}
}
