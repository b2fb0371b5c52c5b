package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/migrate"
)

// The releases every flow runs on: both 1.4 driver classes (affected and
// fixed) and both 1.5+ ones.
var versions = []string{"v1.4.3", "v1.4.4", "v1.5.1", "v1.6.0"}

// changeLine is the kubectl-style line of the write that starts, confirms or
// rolls back on this release.
func changeLine(version, vol string) string {
	if longhorn.MustParseVersion(version).HasVolumeAttachments() {
		return fmt.Sprintf("volumeattachment.longhorn.io %q patched", vol)
	}
	return fmt.Sprintf("volume.longhorn.io %q patched", vol)
}

// TestMigrateHappyPath is the seed's sequence through the command: start
// on node-b, wait until available there, confirm, and verify one active
// engine on node-b with every replica flipped.
func TestMigrateHappyPath(t *testing.T) {
	t.Parallel()
	// 1.7.0 adds the reworked confirm (it waits for the migration engine).
	const vol = "vol-happy"
	attachedEach(t, append(versions, "v1.7.0"), vol, func(t *testing.T, e *env, version string) {

		res := e.run("migrate", vol, "--to", nodeB, "--confirm", "--yes", poll)
		expectCode(t, res, 0)
		expectContains(t, "stdout", res.Stdout, changeLine(version, vol), fmt.Sprintf("volume.longhorn.io %q migrated to node-b", vol))
		expectContains(t, "stderr", res.Stderr, "Pre-checks passed", "Started:", "Ready:", "Confirmed:", "Verified:")
		expectNotContains(t, "stderr", res.Stderr, "Rolling back")
		e.expectSettled(vol, nodeB)
		if longhorn.MustParseVersion(version).HasVolumeAttachments() {
			va := e.va(vol)
			ts := va.CSITickets()
			if len(ts) != 1 || ts[0].NodeID != nodeB || ts[0].ID != longhorn.CSITicketID(vol, nodeB) || !va.Satisfied(ts[0].ID) {
				t.Errorf("csi tickets after the confirm: %+v, want node-b's only, satisfied", ts)
			}
		}
	})
}

// TestConfirmAndRollbackAsSeparateCommands: `migrate` stops once ready,
// status says so, then `migrate confirm` or `migrate rollback` finishes it;
// `migrate confirm` also finishes a migration Longhorn's own attacher
// started.
func TestConfirmAndRollbackAsSeparateCommands(t *testing.T) {
	t.Parallel()
	testenv.PerRelease(t, versions, func(t *testing.T, version string) {
		e := newEnv(t, version)
		e.createAttached(lhsim.VolumeOptions{Migratable: true}, "vol-confirm", "vol-rollback", "vol-csi")

		vol := "vol-confirm"
		res := e.run("migrate", vol, "--to", nodeB, "--yes", poll)
		expectCode(t, res, 0)
		expectContains(t, "stdout", res.Stdout, fmt.Sprintf("volume.longhorn.io %q ready to migrate to node-b", vol))
		expectContains(t, "stderr", res.Stderr, "longhorn-engines migrate confirm "+vol+" -n "+e.NS, "longhorn-engines migrate rollback "+vol+" -n "+e.NS)
		v, es, _ := e.State(vol)
		if v.Spec.NodeID != nodeA || len(es) != 2 {
			t.Fatalf("after migrate without --confirm: nodeID %q, %d engines; want node-a and 2", v.Spec.NodeID, len(es))
		}
		st := e.run("migrate", "status", vol)
		expectCode(t, st, 0)
		expectContains(t, "status", st.Stdout, "Phase:      Ready")

		res = e.run("migrate", "confirm", vol, "--yes", poll)
		expectCode(t, res, 0)
		expectContains(t, "stdout", res.Stdout, changeLine(version, vol), fmt.Sprintf("volume.longhorn.io %q migrated to node-b", vol))
		e.expectSettled(vol, nodeB)
		st = e.run("migrate", "status", vol, "-o", "json")
		expectCode(t, st, 0)
		expectContains(t, "status", st.Stdout, `"phase": "None"`, `"kind": "MigrationStatus"`)

		vol = "vol-rollback"
		expectCode(t, e.run("migrate", vol, "--to", nodeB, "--yes", poll), 0)
		res = e.run("migrate", "rollback", vol, "--yes", poll)
		expectCode(t, res, 0)
		expectContains(t, "stdout", res.Stdout, changeLine(version, vol), fmt.Sprintf("volume.longhorn.io %q rolled back to node-a", vol))
		expectContains(t, "stderr", res.Stderr, "Rollback verified")
		e.expectSettled(vol, nodeA)

		// Started by Longhorn's own attacher (the CSI path), finished here.
		vol = "vol-csi"
		if err := e.Sim.Attach(e.Ctx, vol, nodeB); err != nil {
			t.Fatal(err)
		}
		res = e.run("migrate", "confirm", vol, "--yes", poll)
		expectCode(t, res, 0)
		e.expectSettled(vol, nodeB)

		// Nothing in flight: both refuse and write nothing.
		before := e.resourceVersions()
		for _, sub := range []string{"confirm", "rollback"} {
			res = e.run("migrate", sub, "vol-confirm", "--yes", poll)
			expectCode(t, res, cmdutil.ExitNeedsAction)
			expectContains(t, "stderr", res.Stderr, "FAIL migration in progress")
		}
		testenv.AssertUnchanged(t, before, e.resourceVersions())
	})
}

// TestMigrationEngineNeverReady: the wait times out, the command rolls back
// and verifies the rollback, and reports every step.
func TestMigrationEngineNeverReady(t *testing.T) {
	t.Parallel()
	const vol = "vol-never"
	attachedEach(t, restAndVA, vol, func(t *testing.T, e *env, version string) {
		fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.MigrationEngineNeverReady, Volume: vol})

		res := e.run("migrate", vol, "--to", nodeB, "--confirm", "--yes", "--timeout=15s", poll)
		expectCode(t, res, cmdutil.ExitNeedsAction)
		expectContains(t, "stderr", res.Stderr, "timed out after 15s", "Rolled back:", "Rollback verified:", "Steps taken:")
		expectNotContains(t, "stderr", res.Stderr, "Confirmed:")
		expectContains(t, "stdout", res.Stdout, fmt.Sprintf("volume.longhorn.io %q rolled back to node-a", vol))
		if e.Sim.FaultHits(fid) == 0 {
			t.Error("the fault never fired: the test did not test a migration engine that never gets ready")
		}
		e.expectSettled(vol, nodeA)
	})
}

// TestClonedTwice: when Longhorn cloned a data directory twice for the
// migration engine (it then restarts that engine for ever), migrate does
// not confirm: it rolls back at once, says why and what to do, and the
// migration it advises, run again, goes through.
func TestClonedTwice(t *testing.T) {
	t.Parallel()
	const vol = "vol-twice"
	attachedEach(t, restAndVA, vol, func(t *testing.T, e *env, version string) {
		fid := e.Sim.Inject(lhsim.Fault{Kind: lhsim.CloneTwice, Volume: vol, Times: 1})

		res := e.run("migrate", vol, "--to", nodeB, "--confirm", "--yes", poll)
		expectCode(t, res, cmdutil.ExitNeedsAction)
		expectContains(t, "stderr", res.Stderr, "cloned data directory", "roll the migration back and start it again", "Rolled back:", "Rollback verified:")
		expectNotContains(t, "stderr", res.Stderr, "Confirmed:")
		if e.Sim.FaultHits(fid) == 0 {
			t.Fatal("the fault never fired: no data directory was cloned twice")
		}
		e.expectSettled(vol, nodeA)

		res = e.run("migrate", vol, "--to", nodeB, "--confirm", "--yes", poll)
		expectCode(t, res, 0)
		e.expectSettled(vol, nodeB)
	})
}

// TestInterruptBeforeConfirm: Ctrl-C while waiting for readiness rolls back
// with a context of its own and verifies.
func TestInterruptBeforeConfirm(t *testing.T) {
	t.Parallel()
	const vol = "vol-interrupt"
	attachedEach(t, restAndVA, vol, func(t *testing.T, e *env, version string) {
		e.Sim.Inject(lhsim.Fault{Kind: lhsim.MigrationEngineNeverReady, Volume: vol})

		ctx, cancel := context.WithCancel(e.Ctx)
		defer cancel()
		resCh := make(chan clitest.Result, 1)
		go func() {
			resCh <- clitest.New(e.T, cluster.KubeconfigPath()).Run(ctx, "migrate", vol, "--to", nodeB, "--confirm", "--yes", poll, "-n", e.NS)
		}()
		// Preparing is the migration engine created and, from 1.5, the
		// volume's status.currentMigrationNodeID set: Longhorn writes
		// the two apart, and status shows Requested in between.
		e.WaitFor("migration started", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
			return len(es) == 2 && v.Spec.MigrationNodeID == nodeB && (version == "v1.4.3" || v.Status.CurrentMigrationNodeID == nodeB)
		})
		st := e.run("migrate", "status", vol, "-o", "yaml")
		expectCode(t, st, 0)
		expectContains(t, "status while preparing", st.Stdout, "phase: Preparing", "waiting:", "migrate confirm "+vol)
		cancel() // what Ctrl-C does to the context main passes
		res := <-resCh
		expectCode(t, res, cmdutil.ExitNeedsAction)
		expectContains(t, "stderr", res.Stderr, "Stopped before the confirm: interrupted", "Rolled back:", "Rollback verified:")
		expectNotContains(t, "stderr", res.Stderr, "Confirmed:")
		expectContains(t, "stdout", res.Stdout, fmt.Sprintf("volume.longhorn.io %q rolled back to node-a", vol))
		e.expectSettled(vol, nodeA)
	})
}

// TestSignalDuringMigrationWait: SIGINT or SIGTERM during the wait for
// readiness rolls back and verifies as an interrupt does, and the exit code
// says which signal stopped it (docs/exit-codes.md).
func TestSignalDuringMigrationWait(t *testing.T) {
	t.Parallel()
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(cmdutil.SignalName(sig), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "v1.4.3")
			vol := "vol-signal"
			e.createAttached(lhsim.VolumeOptions{Migratable: true}, vol)
			e.Sim.Inject(lhsim.Fault{Kind: lhsim.MigrationEngineNeverReady, Volume: vol})
			ctx, cancel := context.WithCancelCause(e.Ctx)
			defer cancel(nil)
			resCh := make(chan clitest.Result, 1)
			go func() {
				resCh <- clitest.New(e.T, cluster.KubeconfigPath()).Run(ctx, "migrate", vol, "--to", nodeB, "--confirm", "--yes", poll, "-n", e.NS)
			}()
			e.WaitFor("migration engine created", vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
				return len(es) == 2
			})
			se := &cmdutil.SignalError{Signal: sig}
			cancel(se) // what main does on the signal
			res := <-resCh
			expectCode(t, res, se.Code())
			expectContains(t, "stderr", res.Stderr, "Stopped before the confirm: interrupted", "Rolled back:", "Rollback verified:", "error: interrupted by "+cmdutil.SignalName(sig))
			if n := strings.Count(res.Stderr, "error: "); n != 1 {
				t.Errorf("%d error lines", n)
			}
			e.expectSettled(vol, nodeA)
		})
	}
}

// TestFieldManager: the start's write carries --field-manager in
// managedFields (the volume up to 1.4, its VolumeAttachment from 1.5), and
// an empty one is a usage error before anything is written.
func TestFieldManager(t *testing.T) {
	t.Parallel()
	const vol = "vol-manager"
	attachedEach(t, restAndVA, vol, func(t *testing.T, e *env, version string) {
		before := e.resourceVersions()
		res := e.run("migrate", vol, "--to", nodeB, "--yes", "--field-manager=", poll)
		expectCode(t, res, 2)
		expectContains(t, "stderr", res.Stderr, "--field-manager must not be empty")
		if after := e.resourceVersions(); !maps.Equal(before, after) {
			t.Errorf("an invalid --field-manager wrote something")
		}
		// migrate without --confirm stops once ready: the start's write is
		// still there to read
		res = e.run("migrate", vol, "--to", nodeB, "--yes", "--field-manager=upgrade-window-42", poll)
		expectCode(t, res, 0)
		r := longhorn.Volumes
		if longhorn.MustParseVersion(version).HasVolumeAttachments() {
			r = longhorn.VolumeAttachments
		}
		u := e.Get(r, vol)
		var managers []string
		for _, mf := range u.GetManagedFields() {
			managers = append(managers, mf.Manager)
		}
		if !slices.Contains(managers, "upgrade-window-42") || slices.Contains(managers, cmdutil.DefaultFieldManager) {
			t.Errorf("%s's field managers %v: want upgrade-window-42, not the default", r.Kind, managers)
		}
	})
}

// TestSelfConfirmingMigration: from 1.5, once no csi-attacher ticket is
// left on the source, Longhorn's VolumeAttachment controller confirms the
// migration itself (explorer seed 33 state 6 on 1.10.0 and 1.12.0).
// migrate status says so and offers no rollback, and migrate rollback
// refuses: it would remove the last ticket and detach the volume from the
// workload. The migration engine is held unready so that the simulator's
// VolumeAttachment controller (1.7+) waits to confirm.
func TestSelfConfirmingMigration(t *testing.T) {
	t.Parallel()
	testenv.PerRelease(t, []string{"v1.10.0", "v1.12.0"}, func(t *testing.T, version string) {
		e := newEnv(t, version)
		vol := "vol-self-confirm"
		e.createAttached(lhsim.VolumeOptions{Migratable: true}, vol)
		held := e.Sim.Inject(lhsim.Fault{Kind: lhsim.MigrationEngineNeverReady, Volume: vol})
		if err := e.Sim.Attach(e.Ctx, vol, nodeB); err != nil {
			t.Fatal(err)
		}
		e.WaitFor("migration started", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
			return v.Spec.MigrationNodeID == nodeB && len(es) == 2
		})
		if err := e.Sim.Detach(e.Ctx, vol, nodeA); err != nil {
			t.Fatal(err)
		}
		e.Await("the source's ticket gone", func() bool { return !e.va(vol).HasTicketOn(nodeA) })

		st := e.run("migrate", "status", vol, "-o", "json")
		expectCode(t, st, 0)
		var got migrate.Status
		if err := json.Unmarshal([]byte(st.Stdout), &got); err != nil {
			t.Fatalf("%v\n%s", err, st.Stdout)
		}
		if !strings.Contains(got.LonghornNext, "confirms the migration to "+nodeB+" by itself") ||
			slices.ContainsFunc(got.Next, func(n string) bool {
				return strings.Contains(n, "migrate rollback") || strings.Contains(n, "migrate confirm")
			}) {
			t.Errorf("status: longhorn next %q, next %q", got.LonghornNext, got.Next)
		}
		if on112 := version == "v1.12.0"; strings.Contains(got.Avoid, docs.ConfirmCleanup) != on112 {
			t.Errorf("status: avoid %q, want the confirm clean-up named %t", got.Avoid, on112)
		}

		res := e.run("migrate", "rollback", vol, "--yes", poll)
		expectCode(t, res, 1)
		expectContains(t, "stderr", res.Stderr, "csi-attacher ticket on the source")
		if !e.va(vol).HasTicketOn(nodeB) {
			t.Errorf("rollback refused but the target's ticket is gone")
		}

		e.Sim.ClearFault(held)
		e.WaitFor("confirmed by Longhorn", vol, testenv.Settled(nodeB))
	})
}

// TestStatusOn112: a migration Longhorn's own attacher made ready on 1.12:
// status offers the rollback, not a confirm, and says why (the confirm
// clean-up of docs/troubleshooting-migration-family.md); on 1.11 it offers
// both.
func TestStatusOn112(t *testing.T) {
	t.Parallel()
	testenv.PerRelease(t, []string{"v1.11.1", "v1.12.0"}, func(t *testing.T, version string) {
		e := newEnv(t, version)
		vol := "vol-status"
		e.createAttached(lhsim.VolumeOptions{Migratable: true}, vol)
		e.StartMigration(vol)
		e.WaitFor("migration ready", vol, testenv.MigrationReady)
		st := e.run("migrate", "status", vol, "-o", "json")
		expectCode(t, st, 0)
		var got migrate.Status
		if err := json.Unmarshal([]byte(st.Stdout), &got); err != nil {
			t.Fatalf("%v\n%s", err, st.Stdout)
		}
		offersConfirm := slices.ContainsFunc(got.Next, func(n string) bool { return strings.Contains(n, "migrate confirm") })
		offersRollback := slices.ContainsFunc(got.Next, func(n string) bool { return strings.Contains(n, "migrate rollback") })
		warns := strings.Contains(got.Avoid, docs.ConfirmCleanup)
		on112 := version == "v1.12.0"
		if got.Phase != migrate.PhaseReady || !offersRollback || offersConfirm == on112 || warns != on112 {
			t.Errorf("%s: phase %s, next %q, avoid %q: want Ready with a rollback, a confirm %t, the clean-up named %t", version, got.Phase, got.Next, got.Avoid, !on112, on112)
		}
	})
}
