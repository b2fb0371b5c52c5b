package fix

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// verdict is one look at a repaired volume.
type verdict struct {
	// Done: every check of verify holds.
	Done bool
	// Inverted: the replica flags are inverted with no engine left that
	// Longhorn would flip them for; everything must stop.
	Inverted bool
	// Status says where the volume stands, for progress lines.
	Status string
	// Recovery lists manual steps when Inverted.
	Recovery []string
}

// verify judges a fresh read of the volume after a repair (what
// docs/troubleshooting-two-active-engines.md, "After the repair", says to
// expect): the volume is settled on status.currentNodeID (detect.Settled)
// with the planned survivor as its one engine, and detect finds nothing
// left to report.
func verify(st *longhorn.State, p Planned, threshold time.Duration) verdict {
	v := st.Volume(p.Volume)
	if v == nil {
		return verdict{Status: "the volume is gone"}
	}
	engines, replicas := st.EnginesOf(p.Volume), st.ReplicasOf(p.Volume)
	status := describe(v, engines, replicas, p.Keep.Name)

	f, found := detect.ClassifyVolume(st, p.Volume, detect.Options{PendingThreshold: threshold, SkipOrphans: true})
	if found && f.ReplicasAtRisk() {
		return verdict{Inverted: true, Status: status + "; " + f.Reason, Recovery: recovery(st.Namespace, p, replicas)}
	}

	if to := p.pendingMigration(); to != "" && v.Spec.MigrationNodeID == to {
		return migrationStarted(p, v, engines, replicas, f, found, status)
	}
	var problems []string
	if found {
		problems = append(problems, fmt.Sprintf("%s: %s", f.Type, f.Reason))
	}
	engine, missing := detect.Settled(st, p.Volume, v.Status.CurrentNodeID)
	if engine != "" && engine != p.Keep.Name {
		problems = append(problems, fmt.Sprintf("the remaining engine is %s, not %s", engine, p.Keep.Name))
	}
	problems = append(problems, missing...)
	if len(problems) > 0 {
		return verdict{Status: status + " (" + problems[0] + ")"}
	}
	return verdict{Done: true, Status: status}
}

// migrationStarted judges a volume whose plan found a migration request
// waiting on the repair (detect's Finding.PendingMigration): Longhorn
// starts it once one engine is active, so the repair is done when the
// engine kept is the only active one, running where the volume is, every
// other engine is the migration's (inactive, on the requested node or not
// placed yet), the replicas are active on the engine kept or inactive
// clones for the migration engine, and scan sees a migration in flight and
// nothing else.
func migrationStarted(p Planned, v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, f detect.Finding, found bool, status string) verdict {
	to := v.Spec.MigrationNodeID
	problem := ""
	fail := func(why string) {
		if problem == "" {
			problem = why
		}
	}
	migration := map[string]bool{}
	for _, e := range engines {
		switch {
		case e.Name == p.Keep.Name:
			if !e.IsActive() || e.Status.CurrentState != longhorn.StateRunning || e.Spec.NodeID != v.Status.CurrentNodeID || v.Spec.NodeID != v.Status.CurrentNodeID {
				fail(fmt.Sprintf("%s is not the one active engine running on the current node", e.Name))
			}
		case !migrationEngine(e, to):
			fail(fmt.Sprintf("%s (on %s) is not the migration's engine yet", e.Name, orDash(e.Spec.NodeID)))
		default:
			migration[e.Name] = true
		}
	}
	served := 0
	for _, r := range replicas {
		switch {
		case r.Spec.EngineName == p.Keep.Name && r.Spec.Active:
			served++
		case migration[r.Spec.EngineName] && !r.Spec.Active:
		default:
			fail("replicas not all active on " + p.Keep.Name + " or clones for the migration")
		}
	}
	switch {
	case served == 0:
		fail("no replica active on " + p.Keep.Name)
	case len(migration) == 0:
		fail("Longhorn has not started the migration to " + to + " yet")
	case !found || f.Type != detect.TypeMigrationInFlight || f.Severity != detect.SeverityInfo:
		fail("scan does not see a migration in flight")
	}
	if problem != "" {
		return verdict{Status: status + " (" + problem + ")"}
	}
	return verdict{Done: true, Status: status + "; Longhorn now runs the migration to " + to + " requested before the repair"}
}

// migrationEngine: e is what Longhorn makes the engine of a migration to
// node to: inactive, on that node or not placed yet.
func migrationEngine(e *longhorn.Engine, to string) bool {
	return !e.IsActive() && (e.Spec.NodeID == "" || e.Spec.NodeID == to)
}

// movedOn tells whether the volume has moved on since the plan: it was
// detached (spec.nodeID cleared, as a detach request does), or an engine
// exists that the plan's read did not have (on an attached volume Longhorn
// creates one only for a migration). Either way the state that was repaired
// is gone, and waiting for the planned survivor would hold the guard's next
// repair until --timeout (found by the soak, docs/soak.md). The replica
// checks of verify run first: a volume that moved on with its flags
// inverted still stops everything. Not a verification: fix exits 1.
func movedOn(st *longhorn.State, p Planned) (string, bool) {
	v := st.Volume(p.Volume)
	if v == nil || len(p.Snapshot.Engines) == 0 {
		return "", false
	}
	if p.Finding != nil && p.Finding.Evidence.NodeID != "" && v.Spec.NodeID == "" {
		return fmt.Sprintf("the volume was detached before the change could be verified (spec.nodeID was %q at the plan, now empty; volume %s)",
			p.Finding.Evidence.NodeID, orDash(v.Status.State)), true
	}
	known := make(map[string]bool, len(p.Snapshot.Engines))
	for _, e := range p.Snapshot.Engines {
		known[e.Name+"/"+e.UID] = true
	}
	// The engine of a migration that waited on the repair is expected:
	// Longhorn creates it, inactive, before it places it on the node asked.
	to := p.pendingMigration()
	expected := func(e *longhorn.Engine) bool {
		return to != "" && v.Spec.MigrationNodeID == to && migrationEngine(e, to)
	}
	var fresh []string
	keepThere := false
	for _, e := range st.EnginesOf(p.Volume) {
		keepThere = keepThere || (e.Name == p.Keep.Name && string(e.UID) == p.Keep.UID)
		if !known[e.Name+"/"+string(e.UID)] && !expected(e) {
			fresh = append(fresh, fmt.Sprintf("%s (on %s)", e.Name, orDash(e.Spec.NodeID)))
		}
	}
	if len(fresh) == 0 {
		return "", false
	}
	sort.Strings(fresh)
	kept := "the engine kept, " + p.Keep.Name + ", is still there"
	if p.Keep.Name == "" {
		kept = "no engine was kept in particular"
	} else if !keepThere {
		kept = "the engine kept, " + p.Keep.Name + ", is gone (a migration was confirmed)"
	}
	return fmt.Sprintf("the volume moved on before the change could be verified: engine %s did not exist when the repair was planned and %s; volume on %q, spec.migrationNodeID %q",
		strings.Join(fresh, ", "), kept, v.Status.CurrentNodeID, v.Spec.MigrationNodeID), true
}

// describe summarises the volume in one line for progress output.
func describe(v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, keep string) string {
	es := make([]string, 0, len(engines))
	sort.Slice(engines, func(i, j int) bool { return engines[i].Name < engines[j].Name })
	for _, e := range engines {
		flags := "inactive"
		if e.Spec.Active {
			flags = "active"
		}
		if e.Deleting() {
			flags += ", deleting"
		}
		es = append(es, fmt.Sprintf("%s (%s, %s, %s)", e.Name, flags, orDash(e.Spec.NodeID), orDash(e.Status.CurrentState)))
	}
	onKeep, active := 0, 0
	for _, r := range replicas {
		if r.Spec.EngineName == keep && r.Spec.Active {
			onKeep++
		}
		if r.Spec.Active {
			active++
		}
	}
	return fmt.Sprintf("%d engine(s): %s; replicas: %d, %d active, %d active on %s",
		len(engines), strings.Join(es, ", "), len(replicas), active, onKeep, keep)
}

// recovery lists the manual steps after inverted flags (longhorn#1988;
// docs/troubleshooting-two-active-engines.md): never delete a replica, point
// the replicas back at the survivor.
func recovery(ns string, p Planned, replicas []*longhorn.Replica) []string {
	var inactive, others []string
	for _, r := range replicas {
		switch {
		case r.Spec.EngineName == p.Keep.Name && !r.Spec.Active:
			inactive = append(inactive, r.Name)
		case r.Spec.EngineName != p.Keep.Name && r.Spec.Active:
			others = append(others, r.Name)
		}
	}
	steps := []string{
		"do not delete any replica of volume " + p.Volume + ": clones share data directories with the originals, and deleting an active replica wipes its directory",
		fmt.Sprintf("keep the current state for support: kubectl -n %s get volumes.longhorn.io,engines.longhorn.io,replicas.longhorn.io -l longhornvolume=%s -o yaml > %s-now.yaml (the volume itself has no such label; add kubectl -n %s get volumes.longhorn.io %s -o yaml)",
			ns, p.Volume, p.Volume, ns, p.Volume),
	}
	if len(inactive) > 0 {
		steps = append(steps, fmt.Sprintf("the replicas of the engine that serves I/O (%s) are inactive: %s; set spec.active=true on them and make sure spec.engineName is %s (longhorn#1988)",
			p.Keep.Name, strings.Join(inactive, ", "), p.Keep.Name))
	}
	if len(others) > 0 {
		steps = append(steps, fmt.Sprintf("replicas still active for another engine: %s; point spec.engineName at %s or ask Longhorn support before changing them", strings.Join(others, ", "), p.Keep.Name))
	}
	steps = append(steps, "then run 'kubectl longhorn-engines scan "+p.Volume+"' until it reports the volume healthy")
	return steps
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
