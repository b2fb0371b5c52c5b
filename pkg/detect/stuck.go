package detect

import (
	"fmt"
	"slices"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// migrationBlocked says why Longhorn's processMigration returns before it
// touches this volume, so that a migration in flight or a confirm or
// rollback being finished never moves on ("" when nothing blocks it). Read
// in longhorn-manager's volume controller: every release skips a volume
// whose engine upgrade is pending; up to 1.6 it also skips a volume with
// spec.nodeID empty, and one whose robustness is neither healthy nor
// degraded (1.7 reworked these checks). It skips one with
// status.currentNodeID empty too, but that does not last: with spec.nodeID
// set the attach state machine detaches and re-attaches the volume, which
// sets it (Longhorn 1.4.3 and 1.5.3 finish such a rollback by themselves,
// internal/explore E17).
func migrationBlocked(ver longhorn.Version, v *longhorn.Volume) string {
	if v.UpgradePending() {
		return fmt.Sprintf("an engine upgrade is pending (image %q, status.currentImage %q): Longhorn skips the migration while it is, and the upgrade cannot finish while the volume has two engines (longhorn#7833)",
			v.WantedImage(), v.Status.CurrentImage)
	}
	if !ver.Known() || ver.AtLeast(1, 7, 0) {
		return ""
	}
	switch {
	case v.Spec.NodeID == "":
		return "spec.nodeID is empty: Longhorn " + ver.String() + " does not process the migration of a volume that is not attached (longhorn#8735)"
	case !v.RobustnessUsable():
		return fmt.Sprintf("robustness is %q: Longhorn %s processes a migration only while the volume is healthy or degraded", v.Status.Robustness, ver)
	}
	return ""
}

// enginePicked is the engine Longhorn makes the current one of a volume
// with no active engine, and the node that decides it (nil when it picks
// none): the one of switchCandidates, which Longhorn sets active.
// The engine picked must have active replicas of its own: with none it
// never starts (seed 29 state 13: the active replicas named a deleted
// engine), and on the confirm's switch to the other engine whether
// Longhorn hands the replicas over first depends on timing (seed 28
// state 147 converged in one run and was left with the replicas naming
// the removed engine in the next).
// Run on Longhorn 1.4.3's own controller (internal/explore, seed 28: such
// states converge by themselves).
func enginePicked(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, va *longhorn.VolumeAttachment) (*longhorn.Engine, string) {
	// From 1.5 the volume stays attached only while a ticket asks for it
	// on spec.nodeID; with none the VolumeAttachment controller detaches it
	// and, before 1.7, the engines are left as they are (seed 29 state 34
	// on 1.5.3). From 1.7 the pick and the clean-up of the other engine
	// run while it detaches (1.10.0 converged, detached, from seed 33
	// state 16).
	if ver.HasVolumeAttachments() && !ver.FinishesMigrationWhenDetached() && !va.HasTicketOn(v.Spec.NodeID) {
		return nil, ""
	}
	// The pick is ReconcileEngineReplicaState's, at the start of every
	// sync, before processMigration could move status.currentNodeID: from
	// 1.5, with engines on spec.nodeID and status.currentNodeID both, it
	// fails with "BUG: found the second new active engine" at every sync
	// (Longhorn 1.10.0, explorer seed 33 state 130). 1.4 sets the first
	// engine it meets active before it fails, and that write lands: it
	// converged from such states (seed 28 state 147), with the engine on
	// spec.nodeID as processMigration then switches to it.
	candidates := candidatesOn(ver, v, engines, v.Status.CurrentNodeID)
	if ver.Known() && !ver.AtLeast(1, 5, 0) {
		candidates = switchCandidates(ver, v, engines)
	}
	if len(candidates) != 1 {
		return nil, ""
	}
	picked, node := candidates[0], candidates[0].Spec.NodeID
	// An engine in error or stopped makes the outcome depend on timing:
	// Longhorn 1.4.3 ended one such state converged in one run and with a
	// replica left on the removed engine in the next (seed 28 state 372).
	if picked == nil || picked.Deleting() || picked.Status.CurrentState != longhorn.StateRunning {
		return nil, ""
	}
	if !slices.ContainsFunc(replicas, func(r *longhorn.Replica) bool { return r.Spec.Active && r.Spec.EngineName == picked.Name }) {
		return nil, ""
	}
	if pickedOffNode(ver, v, engines) != nil || pickedOnPending(ver, v, picked) {
		return nil, ""
	}
	return picked, node
}

// pickedOnPending: before 1.5, the engine picked is there because it is on
// status.pendingNodeID, not spec.nodeID: Longhorn 1.4.3 set it active and
// kept the volume attached with its engine off spec.nodeID (explorer seed
// 45 state 2101).
func pickedOnPending(ver longhorn.Version, v *longhorn.Volume, picked *longhorn.Engine) bool {
	return ver.Known() && !ver.AtLeast(1, 5, 0) && v.Spec.NodeID != "" && picked.Spec.NodeID != v.Spec.NodeID &&
		picked.Spec.NodeID != v.Status.CurrentNodeID && picked.Spec.NodeID == v.Status.PendingNodeID
}

// pickedOffNode: before 1.5, the one engine of a volume, on
// status.currentNodeID while spec.nodeID names another node. Longhorn
// picks it and sets it active, and with one engine nothing moves
// status.currentNodeID to spec.nodeID: the volume stays attached there,
// its engine off spec.nodeID (Longhorn 1.4.3, explorer seed 45 state 114).
func pickedOffNode(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine) *longhorn.Engine {
	if !ver.Known() || ver.AtLeast(1, 5, 0) || len(engines) != 1 || v.Spec.NodeID == "" {
		return nil
	}
	e := engines[0]
	if e.Spec.NodeID == "" || e.Spec.NodeID == v.Spec.NodeID || e.Spec.NodeID != v.Status.CurrentNodeID {
		return nil
	}
	return e
}

// switchCandidates are the engines Longhorn's datastore
// (GetNewCurrentEngineAndExtras) may take as the current one when it
// switches engines: those on spec.nodeID or status.currentNodeID, before
// 1.6 also on status.pendingNodeID. It fails when two qualify ("BUG: found
// the second new active engine"). For a migratable rwx volume with no
// migration requested and two engines, processMigration first moves
// status.currentNodeID to spec.nodeID, so spec.nodeID alone decides.
// Engines being deleted are included: from 1.8 Longhorn skips them, which
// the caller decides.
func switchCandidates(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine) []*longhorn.Engine {
	current := v.Status.CurrentNodeID
	if v.Migratable() && v.Spec.MigrationNodeID == "" && v.Spec.NodeID != "" && len(engines) >= 2 {
		current = v.Spec.NodeID
	}
	return candidatesOn(ver, v, engines, current)
}

// candidatesOn are the engines on spec.nodeID or current (before 1.6 also
// on status.pendingNodeID).
func candidatesOn(ver longhorn.Version, v *longhorn.Volume, engines []*longhorn.Engine, current string) []*longhorn.Engine {
	nodes := []string{v.Spec.NodeID, current}
	if !ver.AtLeast(1, 6, 0) {
		nodes = append(nodes, v.Status.PendingNodeID)
	}
	var out []*longhorn.Engine
	for _, e := range engines {
		if slices.ContainsFunc(nodes, func(n string) bool { return n != "" && e.Spec.NodeID == n }) {
			out = append(out, e)
		}
	}
	return out
}

// markStuck turns a "wait" or "in flight" verdict into "stuck" when
// Longhorn would never leave the state by itself.
func markStuck(st *longhorn.State, v *longhorn.Volume, f *Finding) {
	why := migrationBlocked(st.Version, v)
	if why == "" {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = "stuck: " + why + "; Longhorn will not finish this by itself (" + f.Reason + "); see docs/troubleshooting-two-active-engines.md"
}

// markExtrasStuck is markStuck for the rows whose way out is Longhorn's
// processMigration (a migration in flight, a confirm or rollback being
// finished, extra engines to remove), which also skips every volume that
// is not migratable.
func markExtrasStuck(st *longhorn.State, v *longhorn.Volume, f *Finding) {
	if why := extrasNeverRemoved(v); why != "" {
		f.Severity, f.Action = SeverityWarning, ActionNone
		f.Reason = why + " (" + f.Reason + ")"
		return
	}
	markStuck(st, v, f)
}

// upgradeDeadlock is the refusal when an engine upgrade is pending on a
// stuck volume (F3). Longhorn's automatic engine upgrade
// (concurrent-automatic-engine-upgrade-per-node-limit > 0) picks volumes
// whose frozen status reads healthy; from then on processMigration skips
// the volume, so neither the upgrade nor the confirm's clean-up can ever
// finish. The repair is not proven on Longhorn's controllers (their engine
// image controller does not run here): the manual steps come instead.
func upgradeDeadlock(v *longhorn.Volume) string {
	field := "spec.engineImage"
	if v.Spec.Image != "" {
		field = "spec.image"
	}
	return fmt.Sprintf("an engine upgrade is pending (%s %q, status.currentImage %q), most likely started by Longhorn's automatic engine upgrade: it can never finish on this volume, and Longhorn does not finish the confirm while it is pending (a deadlock, longhorn#7833); "+
		"by hand: set the setting concurrent-automatic-engine-upgrade-per-node-limit to 0, set the volume's %s back to %q, check that scan no longer reports the upgrade, run fix, then restore the setting (docs/troubleshooting-two-active-engines.md)",
		field, v.WantedImage(), v.Status.CurrentImage, field, v.Status.CurrentImage)
}

// confirmSwitching names the engine a confirm in progress switches to (""
// when it is not one): no migration requested any more, spec.nodeID moved
// to another node than the deleting engine's, and exactly one engine, not
// being deleted, waiting there.
func confirmSwitching(v *longhorn.Volume, others []*longhorn.Engine, deleting *longhorn.Engine) string {
	if v.Spec.MigrationNodeID != "" || v.Spec.NodeID == "" || v.Spec.NodeID == deleting.Spec.NodeID || v.Status.CurrentNodeID != deleting.Spec.NodeID {
		return ""
	}
	next := ""
	for _, e := range others {
		if e.Spec.NodeID != v.Spec.NodeID || e.Deleting() {
			continue
		}
		if next != "" {
			return ""
		}
		next = e.Name
	}
	return next
}
