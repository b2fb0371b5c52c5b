package detect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// confirmWithoutEngine: on Longhorn before 1.5, a confirm (spec.nodeID
// moved to the target, spec.migrationNodeID cleared) landed while the
// migration engine had been taken off the target: Longhorn stops it with
// spec.nodeID empty whenever the running migration replicas no longer
// match its replica map (a replica on a node that went down), to start it
// again. With no migration requested any more nothing places it again,
// and the confirm branch, which looks for an engine on spec.nodeID, finds
// none at every sync ("cannot find the current engine for the
// switching"): the volume stays on the old engine for ever. Run on
// Longhorn 1.4.3's own controller (internal/realtest
// TestConfirmWithoutEngineOnLonghorn). From 1.5, with
// status.currentMigrationNodeID set, the same moment is a MigrationFinishing
// with no engine on spec.nodeID (finishWithoutEngine): Longhorn 1.5.3 stayed
// there too (explorer, seed 31).
func confirmWithoutEngine(c *familyCtx, f *Finding) bool {
	v, ver := c.v, c.st.Version
	if !ver.Known() || ver.HasCurrentMigrationNodeID() || !v.Migratable() {
		return false
	}
	if v.Spec.MigrationNodeID != "" || v.Spec.NodeID == "" || v.Status.CurrentNodeID == "" || len(c.engines) == 0 || v.UpgradePending() {
		return false
	}
	// With the old engine not running, or none of its replicas usable, the
	// volume is not served: Longhorn then detaches and attaches it on
	// spec.nodeID, which places an engine there (explorer on 1.4.3: seed
	// 28 state 160, the engine in error; seed 29 state 163, its replica
	// failed).
	serving := func(e *longhorn.Engine) bool {
		return e.IsActive() && e.Status.CurrentState == longhorn.StateRunning &&
			slices.ContainsFunc(c.replicas, func(r *longhorn.Replica) bool {
				return r.Spec.EngineName == e.Name && r.Spec.Active && r.Spec.FailedAt == ""
			})
	}
	if !slices.ContainsFunc(c.engines, serving) {
		return false
	}
	var parked []*longhorn.Engine
	for _, e := range c.engines {
		// Longhorn's finish switches to it; with one engine there is no
		// finish, and one on status.pendingNodeID stays off spec.nodeID
		// (1.4.3, explorer seed 45 state 1662)
		if e.Spec.NodeID != "" && (e.Spec.NodeID == v.Spec.NodeID || (len(c.engines) > 1 && e.Spec.NodeID == v.Status.PendingNodeID)) {
			return false
		}
		if e.IsActive() && e.Spec.NodeID == "" && e.Status.CurrentState == longhorn.StateRunning {
			// the active engine itself not placed: Longhorn places it on
			// spec.nodeID and finishes (1.4.3, explorer seed 45 states
			// 203, 1098, 1747, 2370 and 2723, each converged)
			return false
		}
		hasReplicas := slices.ContainsFunc(c.replicas, func(r *longhorn.Replica) bool { return r.Spec.EngineName == e.Name })
		if !e.Spec.Active && !e.Deleting() && e.Spec.NodeID == "" && hasReplicas {
			parked = append(parked, e)
		}
	}
	k := FamilyInfo{
		// the restart of a migration engine whose replica map no longer
		// matches, which opens the window (changed in 1.4.5 and 1.5.3)
		Issues:          []string{"longhorn/longhorn#6961"},
		Releases:        "1.4.x and before (run on 1.4.3; from 1.5 the same moment is MigrationFinishing, a finish with no engine on spec.nodeID)",
		AffectedRelease: true,
		Steps:           []string{c.kubectl("get engines.longhorn.io -l longhornvolume=" + v.Name + " -o wide")},
	}
	evidence := "no engine waits there"
	if len(c.engines) == 1 {
		// No migration engine at all (removed by a revert before the
		// confirm): Longhorn's confirm branch needs two engines and
		// returns at once; spec.nodeID and status.currentNodeID stay apart
		// (explorer, seed 28 states 64 and 182 on 1.4.3).
		if v.Status.CurrentNodeID == v.Spec.NodeID {
			return false
		}
		evidence = "no migration engine exists any more (the old engine is the only one)"
		k.Steps = append(k.Steps, fmt.Sprintf("no migration engine to place: stop the workload so that the volume detaches, then start it again on %s (it attaches there); do not delete any replica; see %s", v.Spec.NodeID, FamilyDoc+"#confirm-without-engine"))
	} else if len(parked) == 1 {
		evidence = fmt.Sprintf("the migration engine %s, stopped for a restart, has no node", parked[0].Name)
		k.Steps = append(k.Steps, c.kubectl("patch engines.longhorn.io "+parked[0].Name+" --type merge -p '{\"spec\":{\"nodeID\":\""+v.Spec.NodeID+"\"}}'")+
			"   # place it on "+v.Spec.NodeID+": Longhorn then finishes the confirm (removes the old engine, hands the clone replicas over)")
	} else {
		names := make([]string, len(parked))
		for i, e := range parked {
			names[i] = e.Name
		}
		k.Steps = append(k.Steps, fmt.Sprintf("no single migration engine to place (inactive engines without a node: %s): do not delete any replica; see %s", orNone(strings.Join(names, ", ")), FamilyDoc+"#confirm-without-engine"))
	}
	c.set(f, TypeConfirmWithoutEngine, SeverityWarning,
		fmt.Sprintf("stuck: the migration was confirmed to %s but %s; Longhorn %s finishes a confirm only by switching to an engine on spec.nodeID and will not place one by itself, so the volume stays on its old engine",
			v.Spec.NodeID, evidence, ver), k, "confirm-without-engine")
	if len(parked) == 1 {
		markMigration(f, "")
	}
	return true
}
