package migrate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// readiness says whether confirming a migration now is safe.
type readiness struct {
	// engine is the migration engine (spec.nodeID == B), when there is one.
	engine string
	ready  bool
	// missing lists what is not there yet, in words.
	missing []string
	// failed is set when Longhorn cannot get there without help: the
	// migration engine or the serving engine failed, or the migration was
	// abandoned (Longhorn reverts the migration in these cases).
	failed string
	// recreating is set while the migration engine is in error: Longhorn
	// deletes it and creates another while the migration stays requested
	// (an instance-manager or kubelet restart, longhorn#7302); a wait
	// gives that a grace period instead of failing on the poll that sees it.
	recreating string
	// salvaging is set while the serving engine is stopped or in error on
	// a node that is up: Longhorn detaches the volume and attaches it again
	// there (seen on 1.4.3's own controllers: back within seconds, the
	// migration prepared again), so a wait gives it the same grace.
	salvaging bool
}

func (r readiness) String() string {
	if r.ready {
		return "ready"
	}
	if r.failed != "" {
		return r.failed
	}
	return strings.Join(r.missing, "; ")
}

// checkReady evaluates readiness for a migration to node to. Never confirm
// without it: on 1.5/1.6 the snapshot comparison is the only guard Longhorn
// itself has.
func checkReady(s *snapshot, d driver, to string) readiness {
	var r readiness
	miss := func(format string, args ...any) { r.missing = append(r.missing, fmt.Sprintf(format, args...)) }

	if ok, why := d.started(s, to); !ok {
		miss("migration not started: %s", why)
	}
	from := s.volume.Spec.NodeID
	var old *longhorn.Engine
	for _, e := range s.activeEngines() {
		if e.Spec.NodeID == from {
			old = e
		}
	}
	if old == nil {
		r.failed = fmt.Sprintf("no active engine on %s (the node serving I/O)", orNone(from))
		for _, e := range s.activeEngines() {
			if e.Spec.NodeID == "" && from != "" {
				// stopped for a restart on from
				r.failed, r.salvaging = fmt.Sprintf("the serving engine %s is stopped", e.Name), true
			}
		}
		return r
	}
	if old.Status.CurrentState != longhorn.StateRunning {
		r.failed = fmt.Sprintf("the serving engine %s is %s, not running", old.Name, orText(old.Status.CurrentState, "in no state"))
		r.salvaging = old.Status.CurrentState != longhorn.StateUnknown
		return r
	}

	var mig *longhorn.Engine
	for _, e := range s.enginesOn(to) {
		if !e.Spec.Active && !e.Deleting() {
			mig = e
		}
	}
	if mig == nil {
		for i := range s.engines {
			e := &s.engines[i]
			if e.Name != old.Name && !e.Spec.Active && !e.Deleting() && e.Spec.NodeID == "" {
				mig = e // created, not placed yet
			}
		}
	}
	if mig == nil {
		miss("no migration engine on %s yet", to)
		return r
	}
	r.engine = mig.Name
	if mig.Status.CurrentState == longhorn.StateError {
		r.recreating = fmt.Sprintf("migration engine %s is in state error: Longhorn replaces it while the migration is requested", mig.Name)
		miss("%s", r.recreating)
		return r
	}
	if mig.Spec.NodeID != to {
		miss("migration engine %s not placed on %s yet (replicas being cloned)", mig.Name, to)
	}
	if mig.Spec.DesireState != longhorn.StateRunning || mig.Status.CurrentState != longhorn.StateRunning {
		miss("migration engine %s desired %s, state %s", mig.Name, orText(mig.Spec.DesireState, "-"), orText(mig.Status.CurrentState, "-"))
	}
	if mig.Status.Endpoint == "" {
		miss("migration engine %s has no endpoint", mig.Name)
	}
	if want, got := old.RWCount(), mig.RWCount(); got < want {
		miss("RW replicas %d/%d", got, want)
	}
	if wo := rebuilding(old); len(wo) > 0 {
		miss("replicas of the serving engine %s rebuilding: %s (Longhorn reverts a migration whose source replicas rebuild)", old.Name, strings.Join(wo, ", "))
	}
	// the clones Longhorn's volume controller waits for: it leaves out
	// those on a node that is down or gone (a degraded volume migrates)
	var reps []*longhorn.Replica
	for _, rp := range s.replicasOf(mig.Name) {
		if !s.unavailable[rp.Name] {
			reps = append(reps, rp)
		}
	}
	notRunning := 0
	for _, rp := range reps {
		if rp.Status.CurrentState != longhorn.StateRunning {
			notRunning++
		}
	}
	switch {
	case len(reps) == 0:
		miss("no replica of %s yet", mig.Name)
	case notRunning > 0:
		miss("%d of %d replicas of %s not running", notRunning, len(reps), mig.Name)
	}
	if names := inheritedFailure(s.version, reps); len(names) > 0 {
		miss("clones %s carry the spec.lastFailedAt of the replica they copy (longhorn#12311, Longhorn 1.8.3 to 1.10.1): Longhorn %s may never make them ready; if this lasts, roll back and upgrade",
			strings.Join(names, ", "), s.version)
	}
	why, never := mig.MigrationRestart(reps)
	if never && s.version.DeletesExtraMigrationClones() {
		// 1.10.2 and 1.11+ delete the extra clone themselves (longhorn#11397).
		why, never = why+"; Longhorn "+s.version.String()+" deletes the extra clone itself", false
	}
	if never {
		r.failed = why
		return r
	}
	if why != "" {
		miss("%s", why)
	}
	if a, b := old.SnapshotNames(), mig.SnapshotNames(); !slices.Equal(a, b) {
		miss("snapshots not in sync (%d on %s, %d on %s)", len(a), old.Name, len(b), mig.Name)
	}
	if s.version.HasVolumeAttachments() && !s.csiSatisfiedOn(to) {
		m := "ticket of " + to + " not satisfied"
		if msg := s.ticketMessage(to); msg != "" {
			m += " (" + msg + ")"
		}
		miss("%s", m)
	}
	r.ready = len(r.missing) == 0
	return r
}

// rebuilding lists the replicas of e that are rebuilding: WO in its
// replicaModeMap, or in its spec.replicaAddressMap with no mode yet (about to
// be added and rebuilt, longhorn#10495).
func rebuilding(e *longhorn.Engine) []string {
	var out []string
	for _, r := range longhorn.SortedKeys(e.Spec.ReplicaAddressMap) {
		if m, ok := e.Status.ReplicaModeMap[r]; !ok || m == longhorn.ModeWO {
			out = append(out, r)
		}
	}
	for _, r := range longhorn.SortedKeys(e.Status.ReplicaModeMap) {
		if _, inMap := e.Spec.ReplicaAddressMap[r]; !inMap && e.Status.ReplicaModeMap[r] == longhorn.ModeWO {
			out = append(out, r)
		}
	}
	return out
}

// inheritedFailure names the clones that carry a spec.lastFailedAt with no
// later spec.lastHealthyAt on the releases where a clone copies it from the
// replica it clones (longhorn#12311: 1.8.3 to 1.10.1).
func inheritedFailure(v longhorn.Version, clones []*longhorn.Replica) []string {
	if !v.AtLeast(1, 8, 3) || v.AtLeast(1, 10, 2) {
		return nil
	}
	var out []string
	for _, r := range clones {
		if r.Spec.LastFailedAt != "" && r.Spec.LastHealthyAt <= r.Spec.LastFailedAt {
			out = append(out, r.Name)
		}
	}
	slices.Sort(out)
	return out
}

// engineToSwitchTo says why Longhorn could not finish a confirm toward to
// if it were written now ("" when it could). Before 1.5 the confirm branch
// switches only to an engine on spec.nodeID, and nothing places the
// migration engine once the migration is no longer requested: a confirm
// written while Longhorn has it stopped off its node for a restart (it does
// that when a migration replica's node goes down) is never finished
// (detect's ConfirmWithoutEngine, run on 1.4.3's own controller). From 1.5
// status.currentMigrationNodeID keeps the migration going and Longhorn
// places the engine itself.
func engineToSwitchTo(s *snapshot, to string) string {
	if s.version.HasCurrentMigrationNodeID() {
		return ""
	}
	for _, e := range s.enginesOn(to) {
		if !e.Spec.Active && !e.Deleting() && e.Spec.DesireState == longhorn.StateRunning && e.Status.CurrentState == longhorn.StateRunning {
			return ""
		}
	}
	for i := range s.engines {
		if e := &s.engines[i]; !e.Spec.Active && !e.Deleting() && e.Spec.NodeID == "" {
			return fmt.Sprintf("the migration engine %s is stopped with no node (Longhorn restarts it when a migration replica is lost)", e.Name)
		}
	}
	return "no migration engine runs on " + to
}
