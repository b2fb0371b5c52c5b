package explore

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Verdict is what scan tells an operator about a volume, in the four
// words the checks compare with Longhorn.
type Verdict string

const (
	VerdictHealthy  Verdict = "healthy"
	VerdictInFlight Verdict = "in flight"
	VerdictWait     Verdict = "wait"
	VerdictStuck    Verdict = "stuck"
)

// VerdictOf folds a finding (nil: none) into a verdict: no finding is
// healthy; an informational migration in flight is in flight; an
// informational finding whose action is wait is wait; everything that
// needs attention or has fix act is stuck.
func VerdictOf(f *detect.Finding) Verdict {
	switch {
	case f == nil:
		return VerdictHealthy
	case f.Severity.NeedsAttention() || f.Action.Writes():
		return VerdictStuck
	case f.Type == detect.TypeMigrationInFlight:
		return VerdictInFlight
	default:
		return VerdictWait
	}
}

// Outcome is what Longhorn's controllers did with a volume.
type Outcome string

const (
	// OutcomeConverged: one engine, active, running on spec.nodeID (or
	// stopped on a detached volume), every replica active and serving it,
	// each on a data directory of its own.
	OutcomeConverged Outcome = "converged"
	// OutcomeMigrating: a live migration Longhorn holds ready: the old
	// engine active, the migration engine running inactive on
	// spec.migrationNodeID, every replica serving one of them.
	OutcomeMigrating Outcome = "migrating"
	// OutcomeStuck: neither, once nothing changed any more.
	OutcomeStuck Outcome = "stuck"
	// OutcomeLost: a data directory that held the volume's data was wiped
	// (a remaining replica uses it, or a healthy active replica was deleted
	// with it), or a replica that was not failed was deleted while active.
	OutcomeLost Outcome = "lost"
)

// Observed is one volume after Longhorn ran.
type Observed struct {
	Outcome       Outcome  `json:"outcome"`
	Wiped         []string `json:"wiped,omitempty"`
	ActiveDeleted []string `json:"activeDeleted,omitempty"`
	// End describes the end state in one line.
	End string `json:"end"`
}

// Judge classifies vol's end state; csiTickets are the nodes csi-attacher
// tickets of its VolumeAttachment still ask for it on (1.5+).
func Judge(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica, csiTickets, wiped, activeDeleted []string) Observed {
	o := Observed{Wiped: wiped, ActiveDeleted: activeDeleted, End: Describe(v, es, rs)}
	if len(csiTickets) > 0 {
		o.End += fmt.Sprintf("; csi tickets on %v", csiTickets)
	}
	switch {
	case len(wiped) > 0 || len(activeDeleted) > 0:
		o.Outcome = OutcomeLost
	case v != nil && v.Spec.NodeID == "" && len(csiTickets) > 0:
		// Detached while the workload's tickets ask for it: Longhorn
		// 1.7.2 left seed 27 state 2 so (a migration whose source engine
		// failed, tickets on both nodes), the state scan calls
		// MigrationCrashDetached. Not a volume Longhorn has finished with.
		o.Outcome = OutcomeStuck
	case converged(v, es, rs):
		o.Outcome = OutcomeConverged
	case migrating(v, es, rs):
		o.Outcome = OutcomeMigrating
	default:
		o.Outcome = OutcomeStuck
	}
	return o
}

func converged(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
	if v == nil || len(es) != 1 || !es[0].Spec.Active || es[0].DeletionTimestamp != nil || len(rs) == 0 ||
		v.Spec.MigrationNodeID != "" || v.Status.CurrentMigrationNodeID != "" {
		return false
	}
	e := es[0]
	switch {
	case v.Spec.NodeID == "":
		if v.Status.State != longhorn.VolumeStateDetached || e.Status.CurrentState != longhorn.StateStopped {
			return false
		}
	default:
		if e.Spec.NodeID != v.Spec.NodeID || v.Status.CurrentNodeID != v.Spec.NodeID || e.Status.CurrentState != longhorn.StateRunning ||
			v.Status.State != longhorn.VolumeStateAttached {
			return false
		}
	}
	// Each replica on its own directory: two on one are a wipe waiting for
	// either's deletion (detect's SharedReplicaDirectory), not a volume
	// Longhorn has finished with.
	dirs := map[string]bool{}
	for _, r := range rs {
		if r.DeletionTimestamp != nil || !r.Spec.Active || r.Spec.EngineName != e.Name || dirs[dirKey(&r)] {
			return false
		}
		dirs[dirKey(&r)] = true
	}
	return true
}

func migrating(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
	if v == nil || v.Spec.MigrationNodeID == "" || len(es) != 2 {
		return false
	}
	var old, mig *longhorn.Engine
	for i := range es {
		switch {
		case es[i].DeletionTimestamp != nil:
			return false
		case es[i].Spec.Active && es[i].Spec.NodeID == v.Spec.NodeID:
			old = &es[i]
		case !es[i].Spec.Active && es[i].Spec.NodeID == v.Spec.MigrationNodeID:
			mig = &es[i]
		}
	}
	if old == nil || mig == nil || old.Status.CurrentState != longhorn.StateRunning || mig.Status.CurrentState != longhorn.StateRunning {
		return false
	}
	for _, r := range rs {
		switch {
		case r.DeletionTimestamp != nil:
			return false
		case r.Spec.EngineName == old.Name && r.Spec.Active, r.Spec.EngineName == mig.Name && !r.Spec.Active:
		default:
			return false
		}
	}
	return true
}

// Describe is a volume's state in one line, engines by node.
func Describe(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) string {
	if v == nil {
		return "volume gone"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "nodeID=%q currentNodeID=%q migrationNodeID=%q currentMigrationNodeID=%q state=%s robustness=%s;",
		v.Spec.NodeID, v.Status.CurrentNodeID, v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID, v.Status.State, v.Status.Robustness)
	if v.Status.PendingNodeID != "" {
		// only when set, so that the lines of earlier fixtures read the same
		fmt.Fprintf(&b, " pendingNodeID=%q;", v.Status.PendingNodeID)
	}
	idx := map[string]int{}
	for i, e := range es {
		idx[e.Name] = i
		fmt.Fprintf(&b, " e%d{node=%q active=%t state=%s deleting=%t}", i, e.Spec.NodeID, e.Spec.Active, e.Status.CurrentState, e.DeletionTimestamp != nil)
	}
	b.WriteString(";")
	for _, r := range rs {
		en := "gone"
		if i, ok := idx[r.Spec.EngineName]; ok {
			en = fmt.Sprintf("e%d", i)
		}
		fmt.Fprintf(&b, " r{node=%s dir=%s engine=%s active=%t state=%s deleting=%t}", r.Spec.NodeID, r.Spec.DataDirectoryName[strings.LastIndex(r.Spec.DataDirectoryName, "-")+1:],
			en, r.Spec.Active, r.Status.CurrentState, r.DeletionTimestamp != nil)
	}
	return b.String()
}

// Disagreement kinds.
const (
	// KindVerdictStuck: scan said healthy, in flight or wait; Longhorn
	// never got there.
	KindVerdictStuck = "verdict-ok-longhorn-stuck"
	// KindVerdictLost: scan said healthy, in flight or wait; Longhorn
	// wiped a directory or deleted an active replica.
	KindVerdictLost = "verdict-ok-longhorn-lost"
	// KindFalseAlarm: scan said stuck; Longhorn converged by itself with
	// nothing lost.
	KindFalseAlarm = "verdict-stuck-longhorn-converged"
	// KindFixNotConverged: after fix, Longhorn did not converge.
	KindFixNotConverged = "fix-not-converged"
	// KindFixLost: after fix, a directory was wiped or an active replica
	// deleted.
	KindFixLost = "fix-lost"
	// KindInterruptedLost: fix stopped after a write, then an operator's
	// or Longhorn's next step, and data was wiped.
	KindInterruptedLost = "interrupted-lost"
	// KindRerunIncomplete: fix stopped after a write, then the next step,
	// and fix run again did not complete (exit code not 0).
	KindRerunIncomplete = "interrupted-rerun-incomplete"
)

// Disagreement is one place where the tool and Longhorn part ways.
type Disagreement struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// judgeVerdict is check (a).
func judgeVerdict(v Verdict, o Observed) *Disagreement {
	switch {
	case v != VerdictStuck && o.Outcome == OutcomeLost:
		return &Disagreement{KindVerdictLost, fmt.Sprintf("scan: %s; Longhorn: wiped %v, active replicas deleted %v; end: %s", v, o.Wiped, o.ActiveDeleted, o.End)}
	case v != VerdictStuck && o.Outcome == OutcomeStuck:
		return &Disagreement{KindVerdictStuck, fmt.Sprintf("scan: %s; Longhorn did not converge; end: %s", v, o.End)}
	case v == VerdictStuck && o.Outcome == OutcomeConverged:
		return &Disagreement{KindFalseAlarm, fmt.Sprintf("scan: stuck; Longhorn converged by itself; end: %s", o.End)}
	}
	return nil
}
