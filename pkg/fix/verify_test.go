package fix

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func TestVerifyStages(t *testing.T) {
	for _, version := range []string{testenv.L13, testenv.L14a, testenv.L15a} {
		t.Run(version, func(t *testing.T) {
			stale := testenv.EngineName(version, "vol", 0)
			st := stateOf(testenv.TwoActiveEngines(version, "vol"))
			p := planOne(t, st, "vol", StrategyAuto)
			if !p.Acts() {
				t.Fatalf("no action: %s", p.Why)
			}
			check := func(stage string, wantDone, wantInverted bool) {
				t.Helper()
				v := verify(st, p, detect.DefaultPendingThreshold)
				if v.Done != wantDone || v.Inverted != wantInverted {
					t.Errorf("%s: done=%t inverted=%t (%s), want done=%t inverted=%t", stage, v.Done, v.Inverted, v.Status, wantDone, wantInverted)
				}
			}
			check("stuck", false, false)
			switch p.Action {
			case detect.ActionDeactivate:
				longhorn.Named(st.Engines, stale).Spec.Active = false
				check("deactivated, Longhorn not done", false, false)
			case detect.ActionDelete:
				e := longhorn.Named(st.Engines, stale)
				now := e.CreationTimestamp
				e.DeletionTimestamp = &now
				check("deleted, waiting for the finalizer (flags still inverted)", false, false)
				removeEngine(st, stale)
				check("engine gone, confirm still to re-run", false, false)
			}
			finishConfirm(st, p.Keep.Name)
			check("finished", true, false)
		})
	}
}

// The data-loss path: on 1.4 the stale engine was deleted, Longhorn never
// flips the replicas. verify must stop and give recovery steps.
func TestVerifyInvertedAfterDeleteOn14(t *testing.T) {
	st := stateOf(testenv.TwoActiveEngines(testenv.L14a, "vol"))
	p := planOne(t, st, "vol", StrategyAuto)
	removeEngine(st, p.Stale[0].Name)
	v := verify(st, p, detect.DefaultPendingThreshold)
	if !v.Inverted || v.Done || len(v.Recovery) == 0 {
		t.Fatalf("verdict %+v, want inverted with recovery steps", v)
	}
	// While the deleted engine still waits for its finalizer, same verdict.
	st = stateOf(testenv.TwoActiveEngines(testenv.L14a, "vol"))
	e := longhorn.Named(st.Engines, p.Stale[0].Name)
	ts := e.CreationTimestamp
	e.DeletionTimestamp = &ts
	if v := verify(st, p, detect.DefaultPendingThreshold); !v.Inverted {
		t.Errorf("1.4 stale engine deleting with inverted flags: %+v, want inverted", v)
	}
}

// Verification needs the planned survivor: a healthy volume served by the
// other engine is not a success.
func TestVerifyWrongSurvivor(t *testing.T) {
	st := stateOf(testenv.TwoActiveEngines(testenv.L14a, "vol"))
	p := planOne(t, st, "vol", StrategyAuto)
	finishConfirm(st, p.Stale[0].Name)
	v := st.Volume("vol")
	v.Spec.NodeID, v.Status.CurrentNodeID = testenv.NodeA, testenv.NodeA
	if got := verify(st, p, detect.DefaultPendingThreshold); got.Done {
		t.Fatalf("verified with the wrong engine left: %s", got.Status)
	}
}

func TestVerifyTicketOn15(t *testing.T) {
	st := stateOf(testenv.TwoActiveEngines(testenv.L15a, "vol"))
	p := planOne(t, st, "vol", StrategyAuto)
	finishConfirm(st, p.Keep.Name)
	id := longhorn.CSITicketID("vol", testenv.NodeB)
	s := st.VolumeAttachments[0].Status.AttachmentTicketStatuses[id]
	s.Satisfied = false
	st.VolumeAttachments[0].Status.AttachmentTicketStatuses[id] = s
	if got := verify(st, p, detect.DefaultPendingThreshold); got.Done {
		t.Fatalf("verified with an unsatisfied ticket on the current node: %s", got.Status)
	}
	s.Satisfied = true
	st.VolumeAttachments[0].Status.AttachmentTicketStatuses[id] = s
	if got := verify(st, p, detect.DefaultPendingThreshold); !got.Done {
		t.Fatalf("not verified: %s", got.Status)
	}
}

// A volume that moves on while fix waits (a migration starts, or is
// confirmed, after the change) ends the wait as superseded; the state the
// plan knew, however it stands, never does (found by the soak on 1.4.3: the
// wait blocked the guard's next repair of that volume until --timeout).
func TestVerifyMovedOn(t *testing.T) {
	// not a verification: fix exits 1 and says to scan again
	if code := exitCode([]Outcome{{Result: ResultSuperseded}}); code != cmdutil.ExitNeedsAction {
		t.Errorf("superseded exits %d, want %d", code, cmdutil.ExitNeedsAction)
	}
	for _, version := range []string{testenv.L14a, testenv.L15a} {
		t.Run(version, func(t *testing.T) {
			st := stateOf(testenv.TwoActiveEngines(version, "vol"))
			p := planOne(t, st, "vol", StrategyAuto)
			if _, moved := movedOn(st, p); moved {
				t.Fatal("the planned state itself reads as moved on")
			}
			// Longhorn finishes with the other known engine left: still the
			// plan's engines, not superseded (TestVerifyWrongSurvivor).
			other := stateOf(testenv.TwoActiveEngines(version, "vol"))
			finishConfirm(other, p.Stale[0].Name)
			if why, moved := movedOn(other, p); moved {
				t.Errorf("only known engines left, read as moved on: %s", why)
			}

			finishConfirm(st, p.Keep.Name)
			mig := testenv.NewEngine("vol-e-new", "vol", testenv.NodeC, false)
			mig.UID = "uid-new"
			st.Engines = append(st.Engines, *mig)
			why, moved := movedOn(st, p)
			if !moved || !strings.Contains(why, "vol-e-new (on "+testenv.NodeC+")") || !strings.Contains(why, "is still there") {
				t.Fatalf("migration engine after the repair: moved=%t %q", moved, why)
			}
			// A detach after the write: the volume moved on too.
			det := stateOf(testenv.TwoActiveEngines(version, "vol"))
			det.Volume("vol").Spec.NodeID = ""
			if why, moved := movedOn(det, p); !moved || !strings.Contains(why, "detached") {
				t.Errorf("detached after the repair: moved=%t %q", moved, why)
			}
			// The confirm: the kept engine goes.
			removeEngine(st, p.Keep.Name)
			if why, moved = movedOn(st, p); !moved || !strings.Contains(why, "is gone") {
				t.Errorf("confirmed onto the new engine: moved=%t %q", moved, why)
			}
		})
	}
}

// A migration requested while two engines were active, that Longhorn had
// not started, waits on the repair: once one engine is active Longhorn
// starts it, and that is a verified repair, not a volume that moved on
// (explorer finding E6, seed 28 state 11 on 1.4.3).
func TestVerifyMigrationStarted(t *testing.T) {
	st := stateOf(testenv.TwoActiveEngines(testenv.L14a, "vol"))
	st.Volume("vol").Spec.MigrationNodeID = testenv.NodeC
	p := planOne(t, st, "vol", StrategyAuto)
	if !p.Acts() || p.pendingMigration() != testenv.NodeC {
		t.Fatalf("plan: acts=%t pending=%q: %s", p.Acts(), p.pendingMigration(), p.Why)
	}
	check := func(stage string, want bool, says string) {
		t.Helper()
		v := verify(st, p, detect.DefaultPendingThreshold)
		if v.Done != want || !strings.Contains(v.Status, says) {
			t.Errorf("%s: done=%t (%s), want done=%t and %q", stage, v.Done, v.Status, want, says)
		}
	}
	check("stuck", false, "")
	finishConfirm(st, p.Keep.Name)
	check("one engine, the migration not started", false, "has not started the migration to "+testenv.NodeC)

	mig := testenv.NewEngine("vol-e-mig", "vol", testenv.NodeC, false)
	mig.UID = "uid-mig"
	st.Engines = append(st.Engines, *mig)
	for _, r := range st.Replicas {
		clone := testenv.NewReplica(r.Name+"-clone", "vol", r.Spec.NodeID, mig.Name, false, r.Spec.DataDirectoryName)
		st.Replicas = append(st.Replicas, *clone)
	}
	check("the requested migration running", true, "Longhorn now runs the migration to "+testenv.NodeC)
	// the migration's engine is expected, not a sign the volume moved on,
	// also while the stale engine is still there (seen on 1.4.3)
	if why, moved := movedOn(st, p); moved {
		t.Errorf("the requested migration reads as moved on: %q", why)
	}
	st.Volume("vol").Spec.MigrationNodeID = testenv.NodeA
	if _, moved := movedOn(st, p); !moved {
		t.Errorf("a migration to another node than the one requested does not read as moved on")
	}
	st.Volume("vol").Spec.MigrationNodeID = testenv.NodeC

	longhorn.Named(st.Engines, "vol-e-mig").Spec.Active = true
	check("the migration engine active", false, "not the migration's engine")
}
