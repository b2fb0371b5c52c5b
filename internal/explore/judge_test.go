package explore

import (
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Converged means each replica on a data directory of its own: the end
// Longhorn 1.4.3 left seed 27 state 22 in, two active replicas of the
// engine on one directory, is a wipe waiting to happen, not converged.
func TestJudgeSharedDirectoryIsNotConverged(t *testing.T) {
	v := testenv.NewVolume("vol", testenv.NodeA)
	e := testenv.NewEngine("vol-e-0", "vol", testenv.NodeA, true)
	e.Status.CurrentState = longhorn.StateRunning
	rs := []longhorn.Replica{
		*testenv.NewReplica("vol-r-1", "vol", testenv.NodeA, e.Name, true, "vol-d0"),
		*testenv.NewReplica("vol-r-2", "vol", testenv.NodeC, e.Name, true, "vol-d2"),
	}
	if o := Judge(v, []longhorn.Engine{*e}, rs, nil, nil, nil); o.Outcome != OutcomeConverged {
		t.Fatalf("distinct directories: %s (%s)", o.Outcome, o.End)
	}
	rs = append(rs, *testenv.NewReplica("vol-r-3", "vol", testenv.NodeC, e.Name, true, "vol-d2"))
	if o := Judge(v, []longhorn.Engine{*e}, rs, nil, nil, nil); o.Outcome != OutcomeStuck {
		t.Errorf("two replicas on one directory: %s, want %s (%s)", o.Outcome, OutcomeStuck, o.End)
	}
}

// A detached volume whose workload's csi tickets still ask for it is not
// converged (Longhorn 1.7.2, seed 27 state 2: detached after the source
// engine failed mid-migration, tickets on both nodes).
func TestJudgeDetachedWithTicketsIsNotConverged(t *testing.T) {
	v := testenv.NewVolume("vol", "")
	v.Status.State, v.Status.CurrentNodeID = longhorn.VolumeStateDetached, ""
	e := testenv.NewEngine("vol-e-0", "vol", "", true)
	e.Status.CurrentState = longhorn.StateStopped
	rs := []longhorn.Replica{*testenv.NewReplica("vol-r-1", "vol", testenv.NodeA, e.Name, true, "vol-d0")}
	if o := Judge(v, []longhorn.Engine{*e}, rs, nil, nil, nil); o.Outcome != OutcomeConverged {
		t.Fatalf("detached, no tickets: %s (%s)", o.Outcome, o.End)
	}
	if o := Judge(v, []longhorn.Engine{*e}, rs, []string{testenv.NodeA, testenv.NodeB}, nil, nil); o.Outcome != OutcomeStuck {
		t.Errorf("detached with csi tickets: %s, want %s (%s)", o.Outcome, OutcomeStuck, o.End)
	}
}
