package detect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Hazards of the migration rows: states that read as a migration in
// flight, a confirm or rollback being finished, or a clean-up after one,
// which Longhorn's own controllers did not finish cleanly when the explorer
// ran them (internal/explore/findings.md). Each turns the row's info into a
// warning that says why.

// stuckOnceGone turns a pending clean-up's wait into a warning when what
// remains once the engines being deleted are gone is not a volume Longhorn
// serves:
//   - no other engine is active and none Longhorn could take (on the
//     volume's node) is running: Longhorn 1.5.3 then deleted the other
//     engine's active replicas and wiped every directory (explorer E16,
//     seed 27 state 8);
//   - before 1.5, spec.nodeID on another node than the one engine left
//     (ConfirmWithoutEngine's rule): Longhorn 1.4.3 removed the engine and
//     kept spec.nodeID and status.currentNodeID apart for good (explorer
//     E2, seed 27 state 3).
func stuckOnceGone(st *longhorn.State, v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, keep string, f *Finding) {
	var left []*longhorn.Engine
	for _, e := range engines {
		if !e.Deleting() {
			left = append(left, e)
		}
	}
	if keep == "" {
		// Only an engine that is not running counts: during a confirm the
		// engine taken over has no active replicas for a moment, until
		// Longhorn's save of the same sync lands.
		running := slices.ContainsFunc(switchCandidates(st.Version, v, left), func(e *longhorn.Engine) bool {
			return e.Status.CurrentState == longhorn.StateRunning
		})
		if !running {
			f.Severity, f.Action = SeverityWarning, ActionNone
			f.Reason = "stuck once it is gone: no other engine is active, and no engine on the volume's node is running for Longhorn to take; it may then remove the replicas that hold the data: never delete a replica, and do not remove the finalizer (" + f.Reason + ")"
		}
		return
	}
	var after Finding
	c := familyCtx{st: st, v: v, engines: left, replicas: replicas, ns: st.Namespace}
	if !confirmWithoutEngine(&c, &after) {
		keptOffNode(st.Version, v, left, keep, f)
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Family = after.Family
	f.Reason = "stuck once it is gone: " + after.Reason + " (" + f.Reason + ")"
}

// keptOffNode: before 1.5, the one engine left once the clean-up is done
// is not on spec.nodeID. With one engine processMigration returns at once,
// and nothing else moves the volume: Longhorn 1.4.3 kept it attached on
// that engine, off spec.nodeID, for good (explorer seed 45: states 985,
// 1359 and 2155 with both engines on one node, 1077 with the engine kept
// stopped on status.currentNodeID).
func keptOffNode(ver longhorn.Version, v *longhorn.Volume, left []*longhorn.Engine, keep string, f *Finding) {
	if f.Severity != SeverityInfo || !ver.Known() || ver.AtLeast(1, 5, 0) || len(left) != 1 || left[0].Name != keep {
		return
	}
	e := left[0]
	if v.Spec.NodeID == "" || e.Spec.NodeID == "" || e.Spec.NodeID == v.Spec.NodeID {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("stuck once it is gone: the one engine left, %s, is on %s while spec.nodeID is %s (status.currentNodeID %s); with one engine Longhorn %s finishes nothing and leaves the volume attached off spec.nodeID; do not delete engines or replicas by hand, see docs/troubleshooting-two-active-engines.md (%s)",
		e.Name, e.Spec.NodeID, v.Spec.NodeID, orNone(v.Status.CurrentNodeID), ver, f.Reason)
}

// danglingOnceGone warns of a pending clean-up in which replicas of the
// engine being deleted are active on the data directories of active
// replicas of the engine kept: Longhorn 1.10.0 removed the engine and left
// them active, naming it (explorer seed 27 state 33), the state scan then
// calls DanglingReplicas; so did 1.9.0 and 1.12.0. 1.4.3 went both ways:
// it finished seed 27 state 33 cleanly (known entry E44) and left such
// replicas active naming the removed engine from seed 45 states 28 (the
// engine kept in error) and 175; 1.5–1.8 were not run from it (but for
// the engine kept down, as on 1.4.3).
func danglingOnceGone(ver longhorn.Version, engines []*longhorn.Engine, replicas []*longhorn.Replica, pending []*longhorn.Engine, keep string, f *Finding) {
	if f.Severity != SeverityInfo || keep == "" {
		return
	}
	// Replicas already active for an engine that is gone stay so through
	// the clean-up: Longhorn 1.4.3 left explorer seed 45 state 1848 so
	// (not run from such a state on later releases).
	if ver.Known() && !ver.AtLeast(1, 5, 0) {
		if gone, _ := danglingOf(replicas, engineSet(engines)); len(gone) > 0 {
			f.Severity, f.Action = SeverityWarning, ActionNone
			f.Reason = fmt.Sprintf("replicas %s are active for an engine that no longer exists: the clean-up does not touch them, and once it is done Longhorn %s cannot use them for %s; never delete a replica; run scan again once the engine is gone (DanglingReplicas, docs/troubleshooting-two-active-engines.md) (%s)",
				strings.Join(gone, ", "), ver, keep, f.Reason)
			return
		}
	}
	keptDown := slices.ContainsFunc(engines, func(e *longhorn.Engine) bool {
		return e.Name == keep && e.Status.CurrentState != longhorn.StateRunning
	})
	if ver.Known() && ver.AtLeast(1, 5, 0) && !ver.AtLeast(1, 9, 0) && !keptDown {
		return // 1.5–1.8: not run from such a state
	}
	names, _ := activeBeside(replicas, engineSet(pending), map[string]bool{keep: true})
	if len(names) > 0 {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("replicas %s of the engine being deleted are active on the data directories of active replicas of %s: once the engine is gone Longhorn %s leaves them active, naming it, and does not clean them up; never delete a replica; run scan again once the engine is gone (DanglingReplicas, docs/troubleshooting-two-active-engines.md) (%s)",
			strings.Join(names, ", "), keep, ver, f.Reason)
		return
	}
	// An active replica of the engine being deleted on a directory of its
	// own is left so too (Longhorn 1.12.0, explorer seed 35 state 1).
	stale := engineSet(pending)
	for _, r := range sortedReplicas(replicas) {
		if stale[r.Spec.EngineName] && r.Spec.Active && r.DeletionTimestamp == nil {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("replicas %s of the engine being deleted are still active: once the engine is gone Longhorn %s leaves them active, naming it, and does not clean them up; never delete a replica; run scan again once the engine is gone (DanglingReplicas, docs/troubleshooting-two-active-engines.md) (%s)",
		strings.Join(names, ", "), ver, f.Reason)
}

// keptWithoutReplicas warns of a pending clean-up whose kept engine has
// no replica at all: nothing hands it one, so it never starts (Longhorn
// 1.4.3 left explorer seed 45 state 510, an rwo volume whose one replica
// named a removed engine, attaching for good).
func keptWithoutReplicas(replicas []*longhorn.Replica, keep string, f *Finding) {
	if f.Severity != SeverityInfo || keep == "" || slices.ContainsFunc(replicas, func(r *longhorn.Replica) bool {
		return r.Spec.EngineName == keep && r.DeletionTimestamp == nil
	}) {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("stuck once it is gone: %s, the engine kept, has no replica of its own, and nothing gives it one: it never starts; never delete a replica; find the replicas that hold the data (kubectl get replicas.longhorn.io -l longhornvolume=%s) and see docs/troubleshooting-two-active-engines.md (%s)",
		keep, f.Volume, f.Reason)
}

// finishBefore15 warns of a finish (two engines, one active, no
// migration requested) that Longhorn before 1.5 does not complete. Its
// finish moves status.currentNodeID to spec.nodeID and takes the engine
// there (switchActiveReplicas then activates that engine's replicas).
// Longhorn 1.4.3 stayed stuck from explorer seed 45:
//   - no replica active at all (1978: detached, faulted, with no replica
//     left; it converged on a replay, known entry E47);
//   - the engine on spec.nodeID with no replica of its own (1676: it never
//     starts);
//   - no engine on spec.nodeID but ones being deleted, the active one
//     elsewhere (1127: once they are gone, one engine off spec.nodeID);
//   - a migration engine not placed yet while the active engine is
//     stopped, or is itself unplaced and not running (2351, 2461, 2616).
func finishBefore15(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, f *Finding) {
	if f.Severity != SeverityInfo || !ver.Known() || ver.AtLeast(1, 5, 0) || !v.Migratable() || v.Spec.MigrationNodeID != "" ||
		v.Spec.NodeID == "" || v.Status.CurrentNodeID == "" || v.UpgradePending() {
		return
	}
	live := func(r *longhorn.Replica) bool { return r.DeletionTimestamp == nil }
	if !slices.ContainsFunc(replicas, func(r *longhorn.Replica) bool { return live(r) && r.Spec.Active }) {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("no replica of the volume is active: Longhorn %s finishes the confirm or rollback with no replica to start from and faults the volume; never delete a replica, see docs/troubleshooting-two-active-engines.md (%s)", ver, f.Reason)
		return
	}
	var onNode, elsewhere []*longhorn.Engine
	unplaced := false
	for _, e := range engines {
		switch {
		case e.Spec.NodeID == v.Spec.NodeID && !e.Deleting():
			onNode = append(onNode, e)
		case e.Spec.NodeID == "" && !e.Deleting():
			unplaced = true
		case !e.Deleting():
			elsewhere = append(elsewhere, e)
		}
	}
	if unplaced {
		// An engine not yet placed (the confirm-parked rows): Longhorn
		// places it and finishes while the active engine runs, and
		// detaches and attaches again when it is in error (seed 28 state
		// 160); stopped, or itself the one unplaced and not running, it
		// stayed (seed 45 states 2351, 2461, 2616).
		for _, e := range engines {
			if !e.IsActive() || e.Status.CurrentState == longhorn.StateRunning || (e.Spec.NodeID != "" && e.Status.CurrentState == longhorn.StateError) {
				continue
			}
			f.Severity, f.Action = SeverityWarning, ActionNone
			f.Reason = fmt.Sprintf("the active engine %s is %s on %s while no engine is placed on spec.nodeID %s: Longhorn %s neither finishes the confirm nor restarts it; do not delete engines or replicas by hand, see docs/troubleshooting-two-active-engines.md (%s)",
				e.Name, orText(e.Status.CurrentState, "not running"), orNone(e.Spec.NodeID), v.Spec.NodeID, ver, f.Reason)
			return
		}
		return
	}
	switch {
	case len(onNode) == 1:
		taken := onNode[0]
		if !slices.ContainsFunc(replicas, func(r *longhorn.Replica) bool { return live(r) && r.Spec.EngineName == taken.Name }) {
			f.Severity, f.Action = SeverityWarning, ActionNone
			f.Reason = fmt.Sprintf("Longhorn %s finishes with %s, the engine on spec.nodeID %s, which has no replica of its own: it never starts; never delete a replica, see docs/troubleshooting-two-active-engines.md (%s)", ver, taken.Name, v.Spec.NodeID, f.Reason)
		}
	case len(onNode) == 0 && len(elsewhere) == 1 && elsewhere[0].IsActive() && !salvaged(elsewhere[0], replicas):
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("no engine is on spec.nodeID %s but for ones being deleted: once they are gone the one engine left, %s, is on %s, and with one engine Longhorn %s finishes nothing; do not delete engines or replicas by hand, see docs/troubleshooting-two-active-engines.md (%s)",
			v.Spec.NodeID, elsewhere[0].Name, orNone(elsewhere[0].Spec.NodeID), ver, f.Reason)
	}
}

// salvaged: e's active replicas have all failed. Longhorn's auto-salvage
// then detaches the volume and attaches it again on spec.nodeID (1.4.3's
// volume controller sets status.pendingNodeID to spec.nodeID), which
// places an engine there (explorer seed 29 state 163 converged so; an
// engine in error is re-attached on status.currentNodeID instead, seed 45
// state 1127 stayed).
func salvaged(e *longhorn.Engine, replicas []*longhorn.Replica) bool {
	failed := false
	for _, r := range replicas {
		if r.Spec.EngineName != e.Name || !r.Spec.Active || r.DeletionTimestamp != nil {
			continue
		}
		if r.Spec.FailedAt == "" {
			return false
		}
		failed = true
	}
	return failed
}

// finishingHazard warns of a confirm or rollback being finished that
// Longhorn does not finish cleanly (explorer, seed 27 on 1.5.3):
//   - status.currentNodeID is empty, so Longhorn attaches the volume
//     again, and its active engine is not on spec.nodeID while another
//     engine is: from 1.5 the attach moves the active engine beside it,
//     two engines on one node (state 4: Longhorn ended in the
//     EnginesOnOneNode state); 1.4.3 went both ways; from 1.7 a
//     migratable volume's confirm is finished first, detached (Longhorn
//     1.11.1 finished state 4), so there is no hazard;
//   - from 1.5, the active engine is not running while a ticket keeps the
//     volume attached: what Longhorn does next depends on timing (state 22
//     ended with a replica naming a removed engine).
func finishingHazard(ver longhorn.Version, v *longhorn.Volume, engines, active []*longhorn.Engine, va *longhorn.VolumeAttachment, f *Finding) {
	if f.Severity != SeverityInfo || len(active) != 1 {
		return
	}
	a := active[0]
	if ver.AtLeast(1, 7, 0) && v.Status.Robustness == longhorn.RobustnessFaulted {
		// 1.7 finishes before it looks at robustness, and the faulted
		// volume is detached meanwhile: Longhorn 1.7.2 finished explorer
		// seed 27 state 90 in one run and left it detaching, with
		// status.currentMigrationNodeID still set, in another. Before
		// 1.7 migrationBlocked already calls it stuck.
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("the volume is faulted (no replica Longhorn can use) while Longhorn finishes the confirm or rollback: Longhorn %s detaches it meanwhile, and whether the finish completes depends on timing (it may stay detaching with status.currentMigrationNodeID set); find out why the replicas failed, never delete a replica, and run scan again (%s)",
			ver, f.Reason)
		return
	}
	if nowhere := finishDetachedNoNode(ver, v, engines); nowhere != "" {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = nowhere
		return
	}
	// From 1.7, with no ticket on spec.nodeID, the volume detaches and the
	// finish runs meanwhile: explorer seed 35 state 90 (no engine on
	// spec.nodeID) ended finished on 1.12.0 and detached with both engines
	// on 1.11.1.
	if nowhere := finishWithoutEngine(ver, v, engines, va); nowhere != "" && ver.FinishesMigrationWhenDetached() && ver.HasVolumeAttachments() && va != nil && !va.HasTicketOn(v.Spec.NodeID) {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("no engine is on spec.nodeID %s (%s) and no ticket asks for the volume there: Longhorn %s detaches it while it finishes the confirm or rollback, and whether the finish completes or leaves the volume detached with its extra engine depends on timing; do not delete engines or replicas by hand, and run scan again once it has detached (docs/troubleshooting-migration-family.md)",
			v.Spec.NodeID, enginesWhere(engines), ver)
		return
	} else if nowhere != "" {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = nowhere
		return
	}
	if both := migrationRequestedWhileFinishing(ver, va); both != "" {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = both + " (" + f.Reason + ")"
		return
	}
	if notAttached := finishWhileNotAttached(ver, v); notAttached != "" {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = notAttached + " (" + f.Reason + ")"
		return
	}
	attachesFirst := !(ver.FinishesMigrationWhenDetached() && v.Migratable())
	if attachesFirst && v.Status.CurrentNodeID == "" && v.Spec.NodeID != "" && a.Spec.NodeID != v.Spec.NodeID {
		for _, e := range engines {
			if e == a || e.Deleting() || e.Spec.NodeID != v.Spec.NodeID {
				continue
			}
			f.Severity, f.Action = SeverityWarning, ActionNone
			if ver.HasVolumeAttachments() {
				f.Reason = fmt.Sprintf("status.currentNodeID is empty, so Longhorn attaches the volume again on %s with its active engine %s, beside engine %s already there: two engines on one node, which Longhorn cannot finish (%s); do not delete engines or replicas by hand, and run scan again once it has attached",
					v.Spec.NodeID, a.Name, e.Name, FamilyDoc+"#engines-on-one-node")
				return
			}
			// 1.4.3 went both ways from this state: finished (seed 31
			// state 2), or removed the old engine with every replica
			// still naming it (seed 27 state 4).
			f.Reason = fmt.Sprintf("status.currentNodeID is empty while the active engine %s is on %s and engine %s waits on %s: Longhorn %s attaches the volume again before it finishes the confirm, and then either finishes it or removes the old engine with the replicas still naming it (the state fix calls DanglingReplicas); run scan again once it has attached",
				a.Name, orNone(a.Spec.NodeID), e.Name, v.Spec.NodeID, ver)
			return
		}
	}
	// Before 1.5, with no engine on spec.nodeID at all while the active one
	// runs elsewhere: the attach sets status.currentNodeID to spec.nodeID
	// and refuses to start the active engine there ("engine is on node … vs
	// volume on …, must detach first"), and the finish finds no engine on
	// that node ("cannot find the current engine for the switching"), at
	// every sync (Longhorn 1.4.3, explorer seed 45 state 37). With the
	// active engine stopped it detaches and attaches on spec.nodeID again
	// (seed 28 state 160, below).
	if !ver.HasVolumeAttachments() && v.Status.CurrentNodeID == "" && v.Spec.NodeID != "" && a.Spec.NodeID != "" &&
		a.Spec.NodeID != v.Spec.NodeID && a.Status.CurrentState == longhorn.StateRunning && engineOn(engines, v.Spec.NodeID) == nil &&
		v.Status.PendingNodeID == "" && v.Status.Robustness != longhorn.RobustnessFaulted {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("stuck: status.currentNodeID is empty, so Longhorn %s attaches the volume on spec.nodeID %s, where no engine is (%s): it will not start the active engine %s there while it runs on %s (\"must detach first\"), and the finish of the confirm or rollback finds no engine on %s, at every sync; do not delete engines or replicas by hand (docs/troubleshooting-migration-family.md)",
			ver, v.Spec.NodeID, engineNodes(engines), a.Name, a.Spec.NodeID, v.Spec.NodeID)
		return
	}
	// Seen from 1.5 with a ticket keeping the volume attached. With none the
	// volume detaches, which ends it cleanly (state 0: Longhorn 1.5.3
	// converged, detached); before 1.5 Longhorn detaches and attaches it on
	// spec.nodeID again (1.4.3 converged, seed 28 state 160).
	if a.Status.CurrentState != longhorn.StateRunning && ver.HasVolumeAttachments() && va.HasTicketOn(v.Spec.NodeID) {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("the engine Longhorn keeps, %s, is %s, not running: whether Longhorn finishes the confirm or rollback cleanly depends on when it starts again; check the instance manager on %s and run scan again (%s)",
			a.Name, orText(a.Status.CurrentState, "in no state"), orNone(a.Spec.NodeID), f.Reason)
	}
}

// finishWhileNotAttached: from 1.7 Longhorn finishes a confirm or rollback
// also while the volume is not attached, and detaches it meanwhile; up to
// 1.9.1 the finish then looks for the kept engine by node, finds none once
// it is detached, and leaves status.currentMigrationNodeID set on a
// detached volume for good (longhorn#11479, fixed in 1.9.2 and 1.10.0):
// explorer seed 27 state 90, an attaching volume, ended so on 1.9.0 in
// three runs of three and on 1.7.2 in its one run; 1.8.1 finished it once,
// 1.10.0 and 1.12.0 always.
func finishWhileNotAttached(ver longhorn.Version, v *longhorn.Volume) string {
	// With status.currentMigrationNodeID empty there is nothing to leave
	// set: 1.9.0 finished explorer seed 35 state 75 (detaching, two
	// engines) with the volume attached again.
	if !ver.FinishesMigrationWhenDetached() || ver.AtLeast(1, 9, 2) || !v.Migratable() || v.Status.CurrentMigrationNodeID == "" ||
		v.Status.State == longhorn.VolumeStateAttached || v.Status.State == longhorn.VolumeStateDetached || v.Status.State == "" {
		return ""
	}
	return fmt.Sprintf("the volume is %s, not attached, while Longhorn %s finishes the confirm or rollback: it detaches the volume meanwhile and can lose the kept engine's node before the finish, leaving status.currentMigrationNodeID set on a detached volume that never attaches again (longhorn#11479, fixed in 1.9.2 and 1.10.0; the state scan then reports as StaleMigrationNodeID); do not delete engines or replicas, and run scan again",
		v.Status.State, ver)
}

// finishDetachedNoNode: from 1.7 the finish of a confirm or rollback runs
// on a detached volume too, and takes as the current engine the one on
// spec.nodeID or status.currentNodeID, else the one on
// status.currentMigrationNodeID, else a lone engine: with all three empty
// and two engines there is none, and every sync fails with "cannot find
// the current engine for the switching" (GetNewCurrentEngineAndExtras, the
// same from 1.7 to 1.12): Longhorn 1.10.0 held explorer seed 33 state 7 so,
// the extra engine left waiting. Says why, or "".
func finishDetachedNoNode(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine) string {
	if !ver.FinishesMigrationWhenDetached() || !v.Migratable() || v.UpgradePending() ||
		v.Spec.NodeID != "" || v.Status.CurrentNodeID != "" || v.Spec.MigrationNodeID != "" || !detachedFinishFails(v, engines) {
		return ""
	}
	return fmt.Sprintf("stuck: the volume is detached with %s and no node in spec.nodeID or status.currentNodeID, so Longhorn %s's finish of the confirm or rollback finds no current engine: every sync fails with \"cannot find the current engine for the switching\"; do not delete engines or replicas by hand (docs/troubleshooting-migration-family.md)",
		enginesWhere(engines), ver)
}

// detachedFinishFails: the finish of a detached volume (spec.nodeID and
// status.currentNodeID empty) is entered, with two engines or
// status.currentMigrationNodeID set, and GetNewCurrentEngineAndExtras
// finds no current engine: none on status.currentMigrationNodeID, and not
// one lone active engine without a node (Longhorn 1.10.0 seed 33 state 7,
// 1.12.0 seed 35 state 93).
func detachedFinishFails(v *longhorn.Volume, engines []*longhorn.Engine) bool {
	cmn := v.Status.CurrentMigrationNodeID
	if len(engines) < 2 && cmn == "" {
		return false
	}
	for _, e := range engines {
		if !e.Deleting() && cmn != "" && e.Spec.NodeID == cmn {
			return false
		}
	}
	return !(len(engines) == 1 && engines[0].Spec.Active && engines[0].Spec.NodeID == "")
}

// enginesWhere is "N engine(s) (a on node-x, b on none)".
func enginesWhere(engines []*longhorn.Engine) string {
	return fmt.Sprintf("%d engine(s) (%s)", len(engines), engineNodes(engines))
}

// engineNodes is "a on node-x, b on <none>".
func engineNodes(engines []*longhorn.Engine) string {
	var where []string
	for _, e := range engines {
		where = append(where, e.Name+" on "+orNone(e.Spec.NodeID))
	}
	return strings.Join(where, ", ")
}

// sourceDown warns of a migration in flight whose active engine, the one
// serving the volume, has crashed or stopped: Longhorn reverts the
// migration and the volume is detached. Longhorn 1.5.3's own controllers
// went on from such a state in two ways (explorer E15, seed 27 state 2):
// attached again on the target with a migration back to the source, or
// left detached with the migration request (the state of longhorn#8735).
func sourceDown(v *longhorn.Volume, engines []*longhorn.Engine, f *Finding) {
	if f.Severity != SeverityInfo {
		return
	}
	if !slices.ContainsFunc(engines, (*longhorn.Engine).IsActive) {
		// Longhorn cannot tell which engine serves the volume (seed 27
		// state 16 on 1.5.3: it dropped the request and stayed attaching)
		f.Severity = SeverityWarning
		f.Reason = fmt.Sprintf("no engine of the volume is active during the migration to %s: Longhorn cannot tell which one serves it and does not go on with the migration; run scan again, and see docs/troubleshooting-two-active-engines.md", v.Spec.MigrationNodeID)
		return
	}
	for _, e := range engines {
		if e.IsActive() && (e.Status.CurrentState == longhorn.StateError || e.Status.CurrentState == longhorn.StateStopped) {
			f.Severity = SeverityWarning
			f.Reason = fmt.Sprintf("the volume's active engine %s is %s during the migration to %s: Longhorn reverts the migration and detaches the volume, then attaches it again (on either node, possibly migrating back) or leaves it detached with the migration request; the workload loses its volume meanwhile: check the instance manager on %s and run scan again",
				e.Name, e.Status.CurrentState, v.Spec.MigrationNodeID, orNone(e.Spec.NodeID))
			return
		}
	}
}

// migrationOntoSource warns of a migration whose target,
// spec.migrationNodeID, is the node the active engine already runs on:
// Longhorn places the migration engine on the target, beside the engine
// it is meant to replace, and never gets the migration ready (Longhorn
// 1.4.3 held explorer seed 27 state 94 so, spec.nodeID on a third node).
func migrationOntoSource(v *longhorn.Volume, engines []*longhorn.Engine, f *Finding) {
	if f.Severity != SeverityInfo {
		return
	}
	for _, e := range engines {
		if e.IsActive() && e.Spec.NodeID != "" && e.Spec.NodeID == v.Spec.MigrationNodeID {
			f.Severity, f.Action = SeverityWarning, ActionNone
			f.Reason = fmt.Sprintf("the migration's target %s is the node the active engine %s already runs on: Longhorn places the migration engine beside it and the migration never gets ready; do not delete engines or replicas by hand, see docs/troubleshooting-two-active-engines.md (%s)",
				v.Spec.MigrationNodeID, e.Name, f.Reason)
			return
		}
	}
}

// unknownInFlight: while a migration is in flight, Longhorn's preparation
// of it (prepareReplicasAndEngineForMigration, every release from 1.4 to
// 1.12) deletes every usable replica that names neither the active engine
// nor the migration engine, and an active replica's deletion wipes its
// directory. A replica left active for an engine that no longer exists
// (the documented delete's DanglingReplicas state) loses its data so once
// a migration is requested: Longhorn 1.4.3 wiped it from explorer seed 45
// states 2596 and 2798.
func unknownInFlight(v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, f *Finding) {
	if f.Severity != SeverityInfo {
		return
	}
	// Replicas of an engine that exists are the other hazards' (an extra
	// engine makes Longhorn revert instead, revertTakesCopy).
	have := engineSet(engines)
	var names []string
	for _, r := range sortedReplicas(replicas) {
		if dangling(r, have) && r.DeletionTimestamp == nil && r.Spec.FailedAt == "" && r.Spec.NodeID != "" {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	f.Severity, f.Action = SeverityCritical, ActionNone
	f.Reason = fmt.Sprintf("replicas %s are active for an engine that no longer exists: while the migration to %s is in flight Longhorn deletes such replicas, and with them their data directories; never delete a replica, see docs/troubleshooting-two-active-engines.md (%s)",
		strings.Join(names, ", "), v.Spec.MigrationNodeID, f.Reason)
}

// sourceOffNode warns, before 1.5, of a migration in flight whose active
// engine is not where the volume says it runs: spec.nodeID and
// status.currentNodeID differ, or the active engine is on neither.
// Longhorn 1.4.3 held such migrations as they were and never got them
// ready (explorer seed 45: states 1442, 1781, 2150 with spec.nodeID on a
// third node, 2095, 2360, 2406 the same with the migration engine not yet
// placed, 1521 and 1824 with the active engine off the current node).
// From 1.5 the VolumeAttachment controller owns spec.nodeID; not judged
// there yet.
func sourceOffNode(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine, f *Finding) {
	if f.Severity != SeverityInfo || !ver.Known() || ver.AtLeast(1, 5, 0) || v.Spec.NodeID == "" || v.Status.CurrentNodeID == "" {
		return
	}
	for _, e := range engines {
		if !e.IsActive() || (e.Spec.NodeID == v.Spec.NodeID && v.Status.CurrentNodeID == v.Spec.NodeID) {
			continue
		}
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("the active engine %s is on %s while spec.nodeID is %s and status.currentNodeID %s: Longhorn %s holds this migration as it is and never gets it ready; do not delete engines or replicas by hand, see docs/troubleshooting-two-active-engines.md (%s)",
			e.Name, orNone(e.Spec.NodeID), v.Spec.NodeID, v.Status.CurrentNodeID, ver, f.Reason)
		return
	}
}

// sourceWithoutReplicas warns of a migration in flight whose active
// engine has no active replica of its own: Longhorn prepares the migration
// from the active engine's replicas, so it never gets ready (Longhorn
// 1.10.0 held explorer seed 33 state 112 so, both engines running and
// every replica inactive).
func sourceWithoutReplicas(engines []*longhorn.Engine, replicas []*longhorn.Replica, f *Finding) {
	if f.Severity != SeverityInfo {
		return
	}
	for _, e := range engines {
		if !e.IsActive() {
			continue
		}
		if slices.ContainsFunc(replicas, func(r *longhorn.Replica) bool {
			return r.Spec.Active && r.Spec.EngineName == e.Name && r.DeletionTimestamp == nil
		}) {
			return
		}
		f.Severity = SeverityWarning
		f.Reason = fmt.Sprintf("the active engine %s has no active replica of its own: Longhorn prepares a migration from the active engine's replicas, so this one never gets ready; never delete a replica; find the replicas that hold the data (kubectl get replicas.longhorn.io -l longhornvolume=%s) and see docs/troubleshooting-two-active-engines.md (%s)",
			e.Name, f.Volume, f.Reason)
		return
	}
}

// activeCloneBeside warns of a migration in flight in which a replica of
// an engine that is not active (the migration engine, wherever it is
// placed) is active on the same data directory as an active replica of
// another engine. Longhorn creates the clones inactive; two active Replica
// CRs on one directory is a shape it does not leave by itself (explorer on
// 1.5.3, seed 27: states 10 and 19 held the migration with the clone still
// active; state 87, its migration engine still on the source node, lost
// data; with the clone set inactive nothing was lost, and the migration got
// ready in one run and churned in another: testdata/pending). Once the migration is over Longhorn's clean-up deactivates such a
// clone itself (1.5.3 finished states 71 and 83), so the finishing rows do
// not call this. A rollback deletes the migration engine's replicas, and deleting an
// active replica removes its directory, which the other replica uses too.
func activeCloneBeside(v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, f *Finding) {
	if f.Severity != SeverityInfo {
		return
	}
	// an extra engine being deleted too: Longhorn skips it, starts a new
	// migration engine and deletes the old one's replicas (1.4.3 wiped the
	// directory so from explorer seed 45 states 156 and 565)
	extra := map[string]bool{}
	for _, e := range engines {
		if !e.Spec.Active {
			extra[e.Name] = true
		}
	}
	clones, beside := activeBeside(replicas, extra, nil)
	if len(clones) == 0 {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("the migration engine's replicas %s are active on the data directories of active replicas %s: Longhorn creates them inactive; Longhorn may delete such a replica itself (1.5.3 did, recreating the migration replicas), and so does a rollback, and deleting an active replica removes its directory, which the other replica uses too: do not roll back, do not wait; "+
		"set spec.active=false on %s now (run on Longhorn 1.5.3's controllers from one such state: nothing was lost; the migration got ready in one run and its engine kept restarting in another, which a rollback ends), then check that scan reports the migration in flight (%s)",
		strings.Join(clones, ", "), strings.Join(beside, ", "), strings.Join(clones, ", "), f.Reason)
}

// revertTakesCopy warns of a migration in flight that Longhorn will revert
// (an extra engine on neither spec.migrationNodeID nor an unset node, or
// more than one extra engine: processMigration's "unexpected state for
// migration") while a replica of an extra engine is active on a data
// directory that no active replica of the serving engine uses. The revert
// deletes every replica that does not name the current engine, and
// deleting an active replica removes its directory: that copy goes, with
// the serving engine's copies kept (Longhorn 1.9.0, 1.10.0, 1.11.1 and
// 1.12.0 did so from explorer seed 35 state 2, the volume left degraded).
// A replica active beside a serving one is activeCloneBeside's.
func revertTakesCopy(v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, f *Finding) {
	if f.Severity != SeverityInfo || v.Spec.NodeID == "" || v.Status.CurrentNodeID == "" {
		// processMigration returns before the revert
		return
	}
	extra := map[string]bool{}
	invalid := false
	for _, e := range engines {
		if e.Spec.Active || e.Deleting() {
			continue
		}
		extra[e.Name] = true
		invalid = invalid || (e.Spec.NodeID != "" && e.Spec.NodeID != v.Spec.MigrationNodeID)
	}
	if !invalid && len(extra) < 2 {
		return
	}
	served := map[string]bool{}
	for _, r := range replicas {
		if r.Spec.Active && r.DeletionTimestamp == nil && !extra[r.Spec.EngineName] {
			served[dirKey(r)] = true
		}
	}
	var names, dirs []string
	for _, r := range sortedReplicas(replicas) {
		if extra[r.Spec.EngineName] && r.Spec.Active && r.DeletionTimestamp == nil && !served[dirKey(r)] {
			names, dirs = append(names, r.Name), append(dirs, r.Spec.NodeID+":"+r.Spec.DataDirectoryName)
		}
	}
	if len(names) == 0 {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("Longhorn reverts this migration (an extra engine is not on %s, or there are several) and its revert deletes every replica of the extra engines: %s, active on %s, which no replica of the serving engine uses, go with those directories, one copy each; the serving engine keeps its replicas and the volume rebuilds the copies it lacks. Do not delete engines or replicas by hand; if those directories may hold the only good copy, get help before Longhorn syncs, see docs/troubleshooting-two-active-engines.md (%s)",
		orNone(v.Spec.MigrationNodeID), strings.Join(names, ", "), strings.Join(dirs, ", "), f.Reason)
}

// failedCloneRecloned warns of a migration in flight in which a clone of
// the migration engine has failed (spec.failedAt): Longhorn leaves it out,
// clones its data directory again and restarts the migration engine to
// take the new clone in. Before 1.10.2 nothing removes a second clone of a
// directory that a sync made from a stale cache, and the migration engine
// then restarts for ever (longhorn#11397): Longhorn 1.9.0 ended explorer
// seed 27 state 87 with the migration engine stopped and four clones on
// one directory in one run of two. From 1.10.2 Longhorn deletes the extra
// clones itself (DeletesExtraMigrationClones).
func failedCloneRecloned(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, va *longhorn.VolumeAttachment, f *Finding) {
	if f.Severity != SeverityInfo || ver.DeletesExtraMigrationClones() {
		return
	}
	if ver.TicketLimits() && va != nil && !va.HasTicketOn(v.Spec.NodeID) {
		// no ticket keeps the volume on spec.nodeID: from 1.7 Longhorn
		// detaches it and cancels the migration before it clones again
		// (1.10.0 did, explorer seed 35 state 83)
		return
	}
	mig := engineOn(engines, v.Spec.MigrationNodeID)
	if mig == nil || mig.Spec.Active {
		return
	}
	// a clone being deleted is cloned again the same way (Longhorn 1.4.3
	// ended explorer seed 45 state 374 with four clones of its directory
	// and the migration engine stopped)
	var failed []string
	for _, r := range sortedReplicas(replicas) {
		if r.Spec.EngineName == mig.Name && (r.Spec.FailedAt != "" || r.DeletionTimestamp != nil) {
			failed = append(failed, r.Name)
		}
	}
	if len(failed) == 0 {
		return
	}
	f.Severity = SeverityWarning
	f.Reason = fmt.Sprintf("replicas %s of migration engine %s have failed or are being deleted: Longhorn clones their data directories again and restarts the migration engine, and before 1.10.2 it can clone a directory twice, after which the migration engine restarts for ever (longhorn#11397; Longhorn 1.9.0 did so from such a state in one run of two): do not delete engines or replicas; if scan then reports the migration not settling, roll it back (migrate rollback, or let the VM migration fail), and upgrade Longhorn past 1.10.1 before draining again (%s)",
		strings.Join(failed, ", "), mig.Name, f.Reason)
}

// ticketBeyondMigration warns of a migration in flight while a
// csi-attacher ticket asks for the volume on a third node (from 1.5). The
// VolumeAttachment controller confirms the migration once the target is
// ready when no ticket is left on the source, and starts a migration to
// the third node as soon as the volume is attached on one node again,
// while the confirm is still being finished: Longhorn 1.12.0 ended
// explorer seed 27 state 65 (tickets on the target and a third node) with
// status.currentNodeID on the target and the old engine still the active
// one in one run of two, and held it as a ready migration in the other.
func ticketBeyondMigration(ver longhorn.Version, v *longhorn.Volume, va *longhorn.VolumeAttachment, f *Finding) {
	if f.Severity != SeverityInfo || !ver.HasVolumeAttachments() {
		return
	}
	var others []string
	for _, n := range va.CSITicketNodes() {
		if n != v.Spec.NodeID && n != v.Spec.MigrationNodeID {
			others = append(others, n)
		}
	}
	if len(others) == 0 {
		return
	}
	f.Severity = SeverityWarning
	f.Reason = fmt.Sprintf("csi-attacher tickets ask for the volume on %s, neither the source %s nor the target %s of the migration: Longhorn goes on from this migration into another while the extra engines of the first wait for their clean-up, and where the volume ends depends on timing; do not delete engines or replicas, find the workload that asks for %s (kubectl get volumeattachments.storage.k8s.io), and run scan again once one migration has settled (%s)",
		strings.Join(others, " and "), orNone(v.Spec.NodeID), v.Spec.MigrationNodeID, strings.Join(others, " and "), f.Reason)
}

// confirmingOn112 warns of a migration Longhorn confirms by itself at its
// next sync (a csi-attacher ticket on the target and none left on the
// source) on a release whose confirm clean-up deletes replicas still
// stored active (longhorn.Version.ReplicaDeleteIgnoresConflict): Longhorn
// 1.12.0 confirmed explorer seed 33 state 6 so and deleted an old replica
// while active in one run, wiped the target's directory in another
// (1 in 3 runs of the replay), with no fault injected.
func confirmingOn112(ver longhorn.Version, v *longhorn.Volume, va *longhorn.VolumeAttachment, f *Finding) {
	if f.Severity != SeverityInfo || !ver.ReplicaDeleteIgnoresConflict() || v.DataEngineName() == longhorn.DataEngineV2 {
		return
	}
	nodes := va.CSITicketNodes()
	if !slices.Contains(nodes, v.Spec.MigrationNodeID) || slices.Contains(nodes, v.Spec.NodeID) {
		return
	}
	f.Severity = SeverityWarning
	f.Reason = fmt.Sprintf("no csi-attacher ticket is left on the source %s, so Longhorn confirms the migration to %s by itself at its next sync, and Longhorn %s's clean-up after a confirm can delete the old replicas while they are stored active and remove the data directories the migrated engine uses (%s); it cannot be held back without detaching the workload: do not delete engines or replicas, and once it has settled run scan again and check the replicas (kubectl get replicas.longhorn.io -l longhornvolume=%s) (%s)",
		orNone(v.Spec.NodeID), v.Spec.MigrationNodeID, ver, docs.ConfirmCleanup, v.Name, f.Reason)
}

// requestCleared: a migration request of a one-engine volume that no
// csi-attacher ticket asks for, from 1.5 (read from a VolumeAttachment).
func requestCleared(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine, va *longhorn.VolumeAttachment) bool {
	return ver.HasVolumeAttachments() && va != nil && len(engines) <= 1 && v.Spec.MigrationNodeID != "" &&
		!slices.Contains(va.CSITicketNodes(), v.Spec.MigrationNodeID)
}

// migrationOntoNode warns of a migration whose target is spec.nodeID
// itself while the volume is still served from another node: neither a
// start nor a confirm ever comes (Longhorn 1.12.0 held explorer seed 37
// state 79 so).
func migrationOntoNode(v *longhorn.Volume, f *Finding) {
	if f.Severity != SeverityInfo || v.Spec.MigrationNodeID != v.Spec.NodeID || v.Status.CurrentNodeID == v.Spec.NodeID {
		return
	}
	f.Severity = SeverityWarning
	f.Reason = fmt.Sprintf("spec.migrationNodeID and spec.nodeID both name %s while the volume is served from %s: Longhorn neither finishes nor reverts such a migration; do not delete engines or replicas by hand, see docs/troubleshooting-two-active-engines.md (%s)",
		v.Spec.NodeID, orNone(v.Status.CurrentNodeID), f.Reason)
}

// faultedInFlight warns of a migration in flight on a faulted volume:
// Longhorn detaches it, and with csi-attacher tickets still on both nodes
// it stays detached until one of them goes (Longhorn 1.10.0, explorer seed
// 33 state 5; from 1.7 the crash-detached state). Before 1.7 the robustness
// rule of markStuck has said so already.
func faultedInFlight(v *longhorn.Volume, f *Finding) {
	if f.Severity != SeverityInfo || v.Status.Robustness != longhorn.RobustnessFaulted {
		return
	}
	f.Severity = SeverityWarning
	f.Reason = fmt.Sprintf("the volume is faulted during the migration to %s: Longhorn detaches it and does not go on with the migration; with a csi-attacher ticket still on each node it stays detached until one goes: check the replicas (kubectl get replicas.longhorn.io -l longhornvolume=%s), then run scan again; see docs/troubleshooting-migration-family.md (%s)",
		v.Spec.MigrationNodeID, v.Name, f.Reason)
}

// deletedBesideMigration warns of an engine being deleted whose replicas
// are active on the data directories of active replicas of another engine
// while a migration is requested: once the engine is gone, Longhorn's
// migration start deletes every replica that names an engine it does not
// know ("found unknown replica ... will directly remove it"), and deleting
// an active replica removes its directory, which the other replica uses
// too (Longhorn 1.10.0 wiped it so from explorer seed 33 state 24; E3 is
// the same path after a stopped repair). An inactive replica's deletion
// keeps a directory another replica uses.
func deletedBesideMigration(v *longhorn.Volume, replicas []*longhorn.Replica, pending []*longhorn.Engine, f *Finding) {
	if f.Severity != SeverityInfo || v.Spec.MigrationNodeID == "" {
		return
	}
	names, beside := activeBeside(replicas, engineSet(pending), nil)
	if len(names) == 0 {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("replicas %s of the engine being deleted are active on the data directories of %s, and a migration to %s is requested: once the engine is gone Longhorn's migration start deletes them as replicas of an unknown engine, and deleting an active replica removes its directory, which the other replica uses too; do not wait: set spec.active=false on %s now (the deletion of an inactive replica keeps a directory another replica uses), then run scan again (%s)",
		strings.Join(names, ", "), strings.Join(beside, ", "), v.Spec.MigrationNodeID, strings.Join(names, ", "), f.Reason)
}

// upgradeBesideStale warns of a pending clean-up while an engine upgrade
// is pending, with replicas of the engine being deleted on the data
// directories of the kept engine's replicas. The upgrade waits for one
// engine, and Longhorn does not clean up after a migration while the volume
// upgrades, so once the engine is gone its replicas stay; the live upgrade
// then clones one replica per data directory from whichever running,
// once-healthy replica of the old image its map iteration meets last
// (groupReplicasByImageAndState, the same from 1.4 to 1.12), so the clone
// may name the deleted engine, and it activates the clones by image:
// Longhorn 1.10.0 ended explorer seed 33 states 18 and 38 with active
// replicas naming the deleted engine, and state 138 cleanly.
func upgradeBesideStale(v *longhorn.Volume, replicas []*longhorn.Replica, pending []*longhorn.Engine, keep string, f *Finding) {
	if f.Severity != SeverityInfo || keep == "" || !v.UpgradePending() || v.DataEngineName() == longhorn.DataEngineV2 {
		return
	}
	stale := engineSet(pending)
	kept := map[string]bool{}
	for _, r := range replicas {
		if r.Spec.EngineName == keep && r.DeletionTimestamp == nil {
			kept[dirKey(r)] = true
		}
	}
	var names []string
	for _, r := range sortedReplicas(replicas) {
		if stale[r.Spec.EngineName] && r.Spec.HealthyAt != "" && kept[dirKey(r)] {
			names = append(names, r.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	field := "engineImage"
	if v.Spec.Image != "" {
		field = "image"
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("an engine upgrade is pending (image %q, current %q) and replicas %s of the engine being deleted share data directories with replicas of %s: once the engine is gone, Longhorn's live upgrade copies either replica of each directory and activates the copies, which can then name the deleted engine (the volume stays degraded, DanglingReplicas); set the setting concurrent-automatic-engine-upgrade-per-node-limit to 0 and roll the upgrade back (kubectl -n %s patch volumes.longhorn.io %s --type=merge -p '{\"spec\":{%q:%q}}'), so that Longhorn removes those replicas first; once scan shows no finding for the volume, set the setting back (%s)",
		v.WantedImage(), v.Status.CurrentImage, strings.Join(names, ", "), keep, orText(v.Namespace, longhorn.DefaultNamespace), v.Name, field, v.Status.CurrentImage, f.Reason)
}

// cleanupTakesLastCopy warns of a pending clean-up in which every active
// replica of the engine kept has failed while replicas of the engine being
// deleted are healthy: once it is gone Longhorn removes them as leftovers
// and cleans up the failed ones, and no copy is left (Longhorn 1.12.0,
// explorer seed 37 state 74: "Failed to auto salvage volume: no data
// exists").
func cleanupTakesLastCopy(replicas []*longhorn.Replica, pending []*longhorn.Engine, keep string, f *Finding) {
	if f.Severity != SeverityInfo || keep == "" {
		return
	}
	stale := engineSet(pending)
	var healthy []string
	for _, r := range sortedReplicas(replicas) {
		switch {
		case r.DeletionTimestamp != nil:
		case r.Spec.EngineName == keep && r.Spec.Active && r.Spec.FailedAt == "":
			return
		case stale[r.Spec.EngineName] && r.Spec.HealthyAt != "" && r.Spec.FailedAt == "":
			healthy = append(healthy, r.Name)
		}
	}
	if len(healthy) == 0 {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("every active replica of %s, the engine kept, has failed, and the only healthy copies are replicas %s of the engine being deleted: once it is gone Longhorn removes them with it and the volume is left with no data; do not delete replicas or engines and do not remove the finalizer; take a support bundle and get help before the engine is gone (%s)",
		keep, strings.Join(healthy, ", "), f.Reason)
}

// activeBeside are the active replicas of the engines of from that share
// a data directory with an active replica of another engine (of one of
// with, when with is not nil), each with the first such replica beside it.
// Replicas being deleted count for neither.
func activeBeside(replicas []*longhorn.Replica, from, with map[string]bool) (names, beside []string) {
	byDir := map[string][]*longhorn.Replica{}
	for _, r := range sortedReplicas(replicas) {
		if r.Spec.Active && r.DeletionTimestamp == nil {
			byDir[dirKey(r)] = append(byDir[dirKey(r)], r)
		}
	}
	for _, r := range sortedReplicas(replicas) {
		if !from[r.Spec.EngineName] || !r.Spec.Active || r.DeletionTimestamp != nil {
			continue
		}
		for _, o := range byDir[dirKey(r)] {
			if o.Spec.EngineName != r.Spec.EngineName && (with == nil || with[o.Spec.EngineName]) {
				names, beside = append(names, r.Name), append(beside, o.Name)
				break
			}
		}
	}
	return names, beside
}

// extrasNeverRemoved: Longhorn removes an extra engine only in
// processMigration, which every release skips for a volume that is not a
// migratable rwx one (Longhorn 1.5.3 kept both engines of such a volume,
// explorer seed 27 states 46 and 85). Says why, or "".
func extrasNeverRemoved(v *longhorn.Volume) string {
	if v.Migratable() {
		return ""
	}
	return fmt.Sprintf("stuck: the volume is not migratable (access mode %s, migratable %t), and Longhorn removes an extra engine only while it processes a migration, which it skips for such a volume: Longhorn will not remove it by itself; never delete a replica, see docs/troubleshooting-two-active-engines.md",
		orText(v.Spec.AccessMode, "unset"), v.Spec.Migratable)
}

// migrationRequestedWhileFinishing: from 1.5 csi-attacher tickets on two
// nodes ask for a new migration while extra engines wait for the clean-up
// of the last confirm or rollback. Which Longhorn does first depends on
// timing: 1.5.3 went on into the new migration in one run of explorer seed
// 27 state 55 and left the volume detached, the migration half-set, in two
// others. Says why, or "".
func migrationRequestedWhileFinishing(ver longhorn.Version, va *longhorn.VolumeAttachment) string {
	if !ver.HasVolumeAttachments() {
		return ""
	}
	nodes := va.CSITicketNodes()
	if len(nodes) < 2 {
		return ""
	}
	return fmt.Sprintf("csi-attacher tickets on %s ask for a new migration while an extra engine waits for the clean-up of the last confirm or rollback: Longhorn may go on into that migration or leave the volume detached with the migration half-set, depending on timing; do not delete engines or replicas, and run scan again once one ticket is gone",
		strings.Join(nodes, " and "))
}

// finishWithoutEngine: Longhorn's finish of a confirm or rollback
// (processMigration with no migration requested, entered while the volume
// has two engines or, from 1.5, while status.currentMigrationNodeID is set)
// moves status.currentNodeID to spec.nodeID and takes the engine on that
// node as the current one (GetNewCurrentEngineAndExtras; before 1.6 also
// one on status.pendingNodeID). From 1.5, with currentMigrationNodeID set
// (from 1.6 also without it) and no engine there, it fails at every
// sync with "cannot find the current engine for the switching" and goes no
// further (Longhorn 1.5.3, after longhorn#7833's delete step,
// TestFamilyUpgradeMigrationDeadlockDeleteStep). With the engine only on
// status.pendingNodeID it takes that one, and the volume's node and its
// engine's may part for good: Longhorn 1.5.3 ended explorer seed 27 state
// 92 so in two runs and finished it in another (known entry E35).
// Says why, or "".
func finishWithoutEngine(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine, va *longhorn.VolumeAttachment) string {
	// Before 1.5 Longhorn recovered such states by itself (1.4.3, the
	// confirm-parked fixtures of seed 28): the attach puts an engine on
	// spec.nodeID. But for an engine on status.pendingNodeID, which it
	// takes instead, even with the active engine not yet placed (1.4.3,
	// seed 45 states 2420, 2467 and 2041).
	cmn := v.Status.CurrentMigrationNodeID != ""
	before15 := !ver.HasCurrentMigrationNodeID()
	if (before15 && !ver.Known()) || (!cmn && len(engines) < 2) || !v.Migratable() || v.UpgradePending() ||
		v.Spec.MigrationNodeID != "" || v.Spec.NodeID == "" || v.Status.CurrentNodeID == "" {
		return ""
	}
	pending := ""
	if !ver.AtLeast(1, 6, 0) && v.Status.PendingNodeID != v.Spec.NodeID {
		pending = v.Status.PendingNodeID
	}
	var onPending *longhorn.Engine
	for _, e := range engines {
		switch {
		case e.Spec.NodeID == v.Spec.NodeID:
			return ""
		case !before15 && e.Spec.Active && e.Spec.NodeID == "" && v.Status.CurrentNodeID == v.Spec.NodeID && !e.Deleting() &&
			(!ver.HasVolumeAttachments() || va.HasTicketOn(v.Spec.NodeID)):
			// the volume controller puts the current engine on the
			// volume's node first, while a ticket keeps it attached
			// (Longhorn 1.12.0 finished explorer seed 37 state 67 so;
			// without the ticket, seed 35 state 90, it detaches instead)
			return ""
		case pending != "" && e.Spec.NodeID == pending:
			onPending = e
		}
	}
	// With status.currentMigrationNodeID empty too the finish needs the
	// engine on spec.nodeID: Longhorn 1.6.2 held explorer seed 27 state 92
	// so (currentNodeID moved, the active engine left on the old node),
	// and 1.5.3 seed 37 state 23 (the active engine on another node).
	if onPending == nil && before15 {
		return ""
	}
	if onPending != nil {
		return fmt.Sprintf("stuck: Longhorn finishes a confirm or rollback by moving status.currentNodeID to spec.nodeID %s, and takes engine %s on status.pendingNodeID %s as the current one as no engine is on %s: the volume's node and its engine's then differ, and Longhorn will not correct it by itself; do not delete engines or replicas by hand (docs/troubleshooting-migration-family.md)",
			v.Spec.NodeID, onPending.Name, pending, v.Spec.NodeID)
	}
	return fmt.Sprintf("stuck: Longhorn finishes a confirm or rollback with the engine on spec.nodeID %s as the current one, and the volume has none there (%s): every sync fails with \"cannot find the current engine for the switching\" and Longhorn will not finish it by itself; do not delete engines or replicas by hand (docs/troubleshooting-migration-family.md)",
		v.Spec.NodeID, engineNodes(engines))
}

// leftoverPendingOnMove warns, on 1.5, of a volume whose csi tickets ask
// for another node than spec.nodeID while status.pendingNodeID names a
// third: Longhorn detaches the volume to attach it where the ticket asks,
// and the leftover pendingNodeID then keeps it detached (the
// LeftoverAttachRequest state, longhorn#7994). Longhorn 1.5.3 left
// explorer seed 27 state 3 (a pending clean-up) so in four runs of four;
// with either field on the ticket's node it attached it there.
func leftoverPendingOnMove(ver longhorn.Version, v *longhorn.Volume, va *longhorn.VolumeAttachment, f *Finding) {
	pn := v.Status.PendingNodeID
	if f.Severity != SeverityInfo || !ver.HasVolumeAttachments() || ver.AtLeast(1, 6, 0) || pn == "" || v.Spec.NodeID == "" {
		return
	}
	nodes := va.CSITicketNodes()
	if len(nodes) != 1 || nodes[0] == v.Spec.NodeID || nodes[0] == pn {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("the workload's csi ticket asks for %s, not spec.nodeID %s, while status.pendingNodeID is %s: Longhorn %s detaches the volume to move it, and the leftover status.pendingNodeID then keeps it detached (LeftoverAttachRequest, %s); do not delete engines or replicas, and run scan again once it has detached (%s)",
		nodes[0], v.Spec.NodeID, pn, ver, FamilyDoc+"#leftover-pendingnodeid-or-longhorn-ui-ticket", f.Reason)
}

// pickFailsBeforeFinish warns, from 1.10, of a confirm or rollback being
// finished (status.currentMigrationNodeID set) with no active engine while
// one engine is on spec.nodeID and another on status.currentNodeID: every
// sync picks the current engine before it reaches the finish
// (ReconcileEngineReplicaState, then processMigration), finds both and
// fails with "BUG: found the second new active engine", so the finish
// never moves status.currentNodeID. Longhorn 1.9.0, 1.10.0 (two runs)
// and 1.12.0 (two) held explorer seed 27 state 50 so; 1.7 and 1.8 pick the
// engine with the same code (read, not run from it); 1.4.3 finished the
// same shape without currentMigrationNodeID.
func pickFailsBeforeFinish(ver longhorn.Version, v *longhorn.Volume, engines, active []*longhorn.Engine, f *Finding) {
	cur, node := v.Status.CurrentNodeID, v.Spec.NodeID
	if f.Severity != SeverityInfo || !ver.HasCurrentMigrationNodeID() || len(active) != 0 || cur == "" || node == "" || cur == node {
		return
	}
	var onNode, onCur []string
	for _, e := range engines {
		switch {
		case e.Deleting():
		case e.Spec.NodeID == node:
			onNode = append(onNode, e.Name)
		case e.Spec.NodeID == cur:
			onCur = append(onCur, e.Name)
		}
	}
	if len(onNode) == 0 && len(onCur) == 1 && !slices.ContainsFunc(engines, func(e *longhorn.Engine) bool {
		return e.Spec.NodeID != "" && e.Spec.NodeID == v.Status.CurrentMigrationNodeID
	}) {
		// The pick takes the one engine, on status.currentNodeID; the
		// finish then moves status.currentNodeID to spec.nodeID and finds
		// no engine there or on status.currentMigrationNodeID (Longhorn
		// 1.10.0, explorer seed 33 states 133 and 141; 1.5.3, seed 37
		// state 26).
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = fmt.Sprintf("stuck: no engine is active; Longhorn makes %s on status.currentNodeID %s the current one, then finishes the confirm or rollback by moving status.currentNodeID to spec.nodeID %s, where no engine is: every sync then fails with \"cannot find the current engine for the switching\" (Longhorn %s held such a volume so); do not delete engines or replicas by hand (docs/troubleshooting-migration-family.md) (%s)",
			onCur[0], cur, node, ver, f.Reason)
		return
	}
	if len(onNode) == 0 || len(onCur) == 0 || !ver.AtLeast(1, 7, 0) {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("stuck: no engine is active, and Longhorn picks the current engine before it finishes the confirm or rollback: it finds %s on spec.nodeID %s and %s on status.currentNodeID %s, and every sync fails with \"BUG: found the second new active engine\" (Longhorn %s held such a volume so); do not delete engines or replicas by hand, see docs/troubleshooting-two-active-engines.md (%s)",
		strings.Join(onNode, ", "), node, strings.Join(onCur, ", "), cur, ver, f.Reason)
}
