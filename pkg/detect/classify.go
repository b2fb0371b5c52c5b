package detect

import (
	"fmt"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// classifyVolume walks the decision table top-down; the first row that
// matches wins. ok is false for a healthy volume.
func classifyVolume(st *longhorn.State, idx *index, v *longhorn.Volume, opts Options) (Finding, bool) {
	engines := idx.engines[v.Name]
	replicas := idx.replicas[v.Name]

	var active, pending []*longhorn.Engine
	for _, e := range engines {
		switch {
		case e.IsActive():
			active = append(active, e)
		case e.Spec.Active && e.Deleting():
			pending = append(pending, e)
		}
	}

	f := Finding{Volume: v.Name, Stale: []string{}, Action: ActionNone}
	f.Evidence = evidence(v, engines, replicas, idx.vas[v.Name])

	switch {
	case len(active) >= 2:
		multipleActive(st, v, engines, replicas, active, &f)
	case len(pending) > 0:
		pendingCleanup(st, v, replicas, active, pending, opts, &f)
	case v.Spec.MigrationNodeID != "" || v.Status.SwitchoverState != "":
		f.Type, f.Severity = TypeMigrationInFlight, SeverityInfo
		if v.Status.SwitchoverState != "" {
			f.Reason = fmt.Sprintf("v2 engine switchover in progress (%s); two engines are expected, nothing to do", v.Status.SwitchoverState)
		} else {
			f.Reason = fmt.Sprintf("live migration from %s to %s in progress; two engines are expected until it is confirmed or rolled back, nothing to do",
				orNone(v.Status.CurrentNodeID), v.Spec.MigrationNodeID)
		}
		markMigration(&f, v.Spec.MigrationNodeID)
	case v.Status.CurrentMigrationNodeID != "":
		f.Type, f.Severity, f.Action = TypeMigrationFinishing, SeverityInfo, ActionWait
		f.Reason = fmt.Sprintf("spec.migrationNodeID is empty but status.currentMigrationNodeID is %s: Longhorn is finishing a confirm or rollback; wait, and look again if it lasts", v.Status.CurrentMigrationNodeID)
	case len(engines) >= 2 && len(active) == 1:
		f.Type, f.Severity, f.Action = TypeMigrationFinishing, SeverityInfo, ActionWait
		f.Keep = active[0].Name
		f.Reason = fmt.Sprintf("one active engine (%s) and %d inactive extra engine(s) with no migration: Longhorn's confirm/rollback branch removes the extras on its next sync", active[0].Name, len(engines)-1)
		markRoles(&f, active[0].Name, nil)
	case len(active) == 1 && inverted(active[0].Name, replicas):
		f.Type, f.Severity = TypeInvertedReplicaFlags, SeverityCritical
		f.Keep = active[0].Name
		f.Reason = fmt.Sprintf("replicas of the serving engine %s are inactive while replicas of %s are active: Longhorn may delete the replicas that hold the data; do not delete any replica, recover by hand (point replica spec.engineName at %s and set spec.active=true, cf. longhorn#1988)",
			active[0].Name, strings.Join(otherEngines(active[0].Name, replicas), ", "), active[0].Name)
		markRoles(&f, active[0].Name, nil)
	case len(active) == 0 && len(engines) > 0 && v.Status.State == longhorn.VolumeStateAttached:
		f.Type, f.Severity = TypeNoActiveEngine, SeverityWarning
		f.Reason = "the volume is attached but none of its engines has spec.active=true; Longhorn cannot pick the current engine"
	default:
		return Finding{}, false
	}
	return f, true
}

func pendingCleanup(st *longhorn.State, v *longhorn.Volume, replicas []*longhorn.Replica, active, pending []*longhorn.Engine, opts Options, f *Finding) {
	f.Type, f.Severity, f.Action = TypePendingCleanup, SeverityInfo, ActionWait
	oldest := pending[0]
	for _, e := range pending[1:] {
		if e.DeletionTimestamp.Before(oldest.DeletionTimestamp) {
			oldest = e
		}
	}
	age := st.Now.Sub(oldest.DeletionTimestamp.Time)
	if age < 0 {
		age = 0
	}
	f.Age = &Duration{age}
	names := engineNames(pending)
	keep := ""
	if len(active) == 1 {
		keep = active[0].Name
		f.Keep = keep
	}
	markRoles(f, keep, nil)
	f.Reason = fmt.Sprintf("active engine %s is being deleted and waits for its %s finalizer (for %s); expected briefly after a confirm, never remove the finalizer by hand",
		strings.Join(names, ", "), longhorn.Finalizer, age.Round(time.Second))
	if age > opts.PendingThreshold {
		f.Severity = SeverityWarning
		f.Reason += fmt.Sprintf("; it has lasted longer than %s: check the longhorn-manager on node %s and that node's instance manager",
			opts.PendingThreshold, orNone(oldest.Status.OwnerID))
	}
	serving := servingNode(st, v)
	for _, e := range pending {
		if serving != "" && e.Spec.NodeID == serving && (keep == "" || active[0].Spec.NodeID != serving) {
			// The engine being deleted is the one on the current node: if
			// Longhorn removes it, nothing serves I/O. Not a confirm leftover.
			f.Severity = SeverityCritical
			f.Reason = fmt.Sprintf("active engine %s on the volume's current node %s is being deleted (for %s): this is the engine serving I/O, not the leftover of a confirm; do not remove its finalizer and find out who deleted it",
				e.Name, serving, age.Round(time.Second))
			return
		}
	}
	cm := v.Status.CurrentMigrationNodeID
	switch {
	case keep == "" || !inverted(keep, replicas):
	case st.Version.HasCurrentMigrationNodeID() && cm != "" && cm == v.Status.CurrentNodeID && active[0].Spec.NodeID == cm:
		// 1.5+ with the confirm unfinished (the L15a stuck state after the
		// documented delete, §8.3): Longhorn re-enters the confirm once the
		// engine is gone and flips the replicas itself; clean-up waits for it.
		f.Reason += fmt.Sprintf("; the replica flags are still inverted (replicas of %s inactive): expected here, Longhorn flips them when it finishes the confirm (status.currentMigrationNodeID=%s)", keep, cm)
	default:
		f.Severity = SeverityCritical
		f.Reason = fmt.Sprintf("a stale engine (%s) is being deleted while the replica flags are inverted (replicas of %s inactive): on Longhorn 1.3/1.4 this deletes the serving engine's replicas; stop and recover the replica flags by hand (cf. longhorn#1988)",
			strings.Join(names, ", "), keep)
	}
}

// multipleActive handles the #6642 rows: pick the survivor from
// status.currentNodeID, check every precondition, choose the action.
func multipleActive(st *longhorn.State, v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, active []*longhorn.Engine, f *Finding) {
	f.Type, f.Severity = TypeMultipleActiveEngines, SeverityCritical
	cls := st.Version.Class()
	serving := servingNode(st, v)

	var survivor *longhorn.Engine
	onServing := 0
	for _, e := range engines {
		if serving != "" && e.Spec.NodeID == serving {
			onServing++
			survivor = e
		}
	}
	if onServing != 1 {
		survivor = nil
	}
	var stale []string
	for _, e := range active {
		if survivor == nil || e.Name != survivor.Name {
			stale = append(stale, e.Name)
		}
	}
	if survivor != nil {
		f.Keep = survivor.Name
		f.Stale = stale
	}
	// Without a survivor no engine is known to be stale: one of them serves I/O.
	markRoles(f, f.Keep, f.Stale)

	f.Preconditions = preconditions(st, v, engines, survivor, stale)
	bug := fmt.Sprintf("%d engines have spec.active=true (%s); every sync of this volume fails with \"BUG: found the second active engine\"",
		len(active), strings.Join(engineNames(active), ", "))

	switch {
	case v.DataEngineName() == longhorn.DataEngineV2 && st.Version.V2Switchover():
		f.Reason = bug + "; this is a v2 volume on Longhorn " + st.Version.String() + " (engine switchover variant, longhorn#13951): report it to Longhorn, no automatic fix"
		return
	case cls == longhorn.ClassL14f || cls == longhorn.ClassL15f:
		f.Reason = bug + "; Longhorn " + st.Version.String() + " has the fix for longhorn#6642, so this state does not come from a confirm: no automatic fix, report it with this evidence"
		return
	}
	if failed := firstFailed(f.Preconditions); failed != nil {
		f.Reason = bug + "; not safe to repair because " + failed.Failure
		return
	}
	switch cls {
	case longhorn.ClassL13, longhorn.ClassL14a:
		f.Action = ActionDeactivate
		f.Reason = bug + fmt.Sprintf("; keep %s on current node %s and set spec.active=false on %s: on Longhorn %s deleting it would skip the replica flip and let Longhorn delete the replicas that hold the data, while deactivating lets Longhorn finish the confirm itself",
			f.Keep, serving, strings.Join(stale, ", "), st.Version.String())
	case longhorn.ClassL15a:
		f.Action = ActionDelete
		f.Reason = bug + fmt.Sprintf("; keep %s on current node %s and delete %s (the documented workaround): status.currentMigrationNodeID is still set, so Longhorn re-enters the confirm and flips the replicas",
			f.Keep, serving, strings.Join(stale, ", "))
	default:
		f.Reason = bug + "; Longhorn version " + st.Version.String() + " is not one this tool repairs: no automatic fix"
	}
}

// preconditions evaluates §8.4 in order. Every check is reported, passed or
// not, so the evidence shows why an action is or is not safe. Each is a name
// that reads as the requirement, the observed value, and (when it fails) a
// sentence that reads as the failure; a new precondition needs only those.
func preconditions(st *longhorn.State, v *longhorn.Volume, engines []*longhorn.Engine, survivor *longhorn.Engine, stale []string) []Check {
	var cs []Check
	add := func(name string, ok bool, failure, detail string) {
		c := Check{Name: name, OK: ok, Detail: detail}
		if !ok {
			c.Failure = failure
		}
		cs = append(cs, c)
	}
	add(CheckVersionKnown, st.Version.Known(),
		fmt.Sprintf("the Longhorn version is unknown (%s): what is safe depends on the release", st.Version.String()),
		fmt.Sprintf("current-longhorn-version is %s", st.Version.String()))
	add(CheckNoMigrationRequested, v.Spec.MigrationNodeID == "",
		fmt.Sprintf("a migration to %s is requested (spec.migrationNodeID): two active engines are expected until it is confirmed or rolled back", v.Spec.MigrationNodeID),
		fmt.Sprintf("spec.migrationNodeID=%q", v.Spec.MigrationNodeID))

	cur := v.Status.CurrentNodeID
	switch {
	case cur == "":
		add(CheckCurrentNode, false,
			"status.currentNodeID is empty: Longhorn does not say which engine serves I/O",
			fmt.Sprintf("status.currentNodeID is empty (spec.nodeID=%q)", v.Spec.NodeID))
	case v.Spec.NodeID == "":
		add(CheckCurrentNode, false,
			"spec.nodeID is empty: Longhorn does not process this volume's engines (longhorn#4827)",
			fmt.Sprintf("spec.nodeID is empty (status.currentNodeID=%q)", cur))
	default:
		add(CheckCurrentNode, cur == v.Spec.NodeID,
			fmt.Sprintf("status.currentNodeID %s differs from spec.nodeID %s: the volume is not settled on one node", cur, v.Spec.NodeID),
			fmt.Sprintf("status.currentNodeID=%q spec.nodeID=%q", cur, v.Spec.NodeID))
	}

	cm := v.Status.CurrentMigrationNodeID
	cmOK := cm == "" || (st.Version.Class() == longhorn.ClassL15a && cm == cur)
	add(CheckNoMigrationInFlight, cmOK,
		fmt.Sprintf("status.currentMigrationNodeID is %s: Longhorn has not finished a migration", cm),
		fmt.Sprintf("status.currentMigrationNodeID=%q", cm))

	serving := servingNode(st, v)
	switch {
	case survivor == nil:
		n := 0
		for _, e := range engines {
			if serving != "" && e.Spec.NodeID == serving {
				n++
			}
		}
		failure := fmt.Sprintf("no engine is on the current node %s: the engine serving I/O is unknown", serving)
		switch {
		case serving == "":
			failure = "the current node is unknown: the engine serving I/O is unknown"
		case n > 1:
			failure = fmt.Sprintf("%d engines are on the current node %s: which one serves I/O is ambiguous", n, serving)
		}
		add(CheckOneRunningEngine, false, failure, fmt.Sprintf("%d engines have spec.nodeID=%q", n, serving))
	case survivor.Deleting():
		add(CheckOneRunningEngine, false,
			fmt.Sprintf("%s, the engine on the current node, is being deleted", survivor.Name),
			fmt.Sprintf("%s is being deleted", survivor.Name))
	case !survivor.Spec.Active:
		add(CheckOneRunningEngine, false,
			fmt.Sprintf("%s, the engine on the current node %s, is not active", survivor.Name, serving),
			fmt.Sprintf("%s on %s is not active", survivor.Name, serving))
	case survivor.Status.CurrentState != longhorn.StateRunning || survivor.Status.Endpoint == "" || survivor.RWCount() == 0:
		add(CheckOneRunningEngine, false,
			fmt.Sprintf("%s, the engine on the current node, is not serving I/O (state %q, endpoint %q, %d RW replicas)",
				survivor.Name, survivor.Status.CurrentState, survivor.Status.Endpoint, survivor.RWCount()),
			fmt.Sprintf("%s: state=%q endpoint=%q RW replicas=%d",
				survivor.Name, survivor.Status.CurrentState, survivor.Status.Endpoint, survivor.RWCount()))
	default:
		add(CheckOneRunningEngine, true, "", fmt.Sprintf("%s: running, endpoint %s, %d RW replicas",
			survivor.Name, survivor.Status.Endpoint, survivor.RWCount()))
	}

	staleOK, detail, onServing := true, []string{}, []string{}
	for _, name := range stale {
		for _, e := range engines {
			if e.Name != name {
				continue
			}
			if e.Spec.NodeID == serving {
				staleOK = false
				onServing = append(onServing, e.Name)
			}
			note := fmt.Sprintf("%s on %q", e.Name, e.Spec.NodeID)
			if survivor != nil && strictlyNewer(e, survivor) {
				note += " (newer than the survivor)"
			}
			detail = append(detail, note)
		}
	}
	failure := fmt.Sprintf("stale engine %s is on the current node %s", strings.Join(onServing, ", "), serving)
	if len(stale) == 0 {
		staleOK = false
		detail = append(detail, "no stale engine identified")
		failure = "no stale engine is identified"
	}
	add(CheckStaleElsewhere, staleOK, failure, strings.Join(detail, ", "))

	add(CheckRobustness, v.RobustnessUsable(),
		fmt.Sprintf("status.robustness is %q: Longhorn does not report usable replicas for this volume", v.Status.Robustness),
		fmt.Sprintf("status.robustness=%q", v.Status.Robustness))
	add(CheckNoUpgrade, !v.UpgradePending(),
		fmt.Sprintf("an engine image upgrade is pending (%q, current %q): repair after it finishes", v.WantedImage(), v.Status.CurrentImage),
		fmt.Sprintf("image %q, current %q", v.WantedImage(), v.Status.CurrentImage))
	return cs
}

// servingNode is the node whose engine must be kept (§8.4 step 5):
// status.currentNodeID, or status.currentEngineNodeID for a v2 volume on
// 1.12+ only. Before 1.12 that field does not exist; if it shows up anyway
// (inconsistent input), trusting it could keep an engine that is not on
// currentNodeID and drop the one that is.
func servingNode(st *longhorn.State, v *longhorn.Volume) string {
	if st.Version.V2Switchover() {
		return v.ServingNodeID()
	}
	return v.Status.CurrentNodeID
}

func firstFailed(cs []Check) *Check {
	for i := range cs {
		if !cs[i].OK {
			return &cs[i]
		}
	}
	return nil
}

// inverted: the serving engine's replicas are not all active while some
// replica of another engine is active.
func inverted(keep string, replicas []*longhorn.Replica) bool {
	keepInactive, otherActive, keepActive := false, false, 0
	for _, r := range replicas {
		switch {
		case r.Spec.EngineName == keep && !r.Spec.Active:
			keepInactive = true
		case r.Spec.EngineName == keep:
			keepActive++
		case r.Spec.Active:
			otherActive = true
		}
	}
	return otherActive && (keepInactive || keepActive == 0)
}

func otherEngines(keep string, replicas []*longhorn.Replica) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range replicas {
		if r.Spec.Active && r.Spec.EngineName != keep && !seen[r.Spec.EngineName] {
			seen[r.Spec.EngineName] = true
			out = append(out, orNone(r.Spec.EngineName))
		}
	}
	return out
}

func engineNames(es []*longhorn.Engine) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
