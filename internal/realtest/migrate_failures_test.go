package realtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// The failures longhorn-tests' ha_volume_migration suite drives, played on
// each release's own controllers (crashes by lhsim's instance layer, node
// loss by the Longhorn Node's Ready condition) and answered by the built
// binary. The suite's expected outcome is the oracle; each test logs what
// Longhorn did and what migrate did, for the table in docs/testing.md.

// readyToConfirm runs `migrate VOL --to node-b` (no --confirm): the
// migration is started and ready, the volume still on node-a.
func (e *env) readyToConfirm(vol string) {
	e.t.Helper()
	e.attached(vol)
	out, errOut, code := e.migrate(vol, "--to", nodeB, "--yes", poll)
	expectExit(e.t, "migrate (no --confirm)", 0, out, errOut, code)
}

// setNodeReady takes a node down or brings it back as powering it off or on
// would: Longhorn's Node condition (which the node controller, not run here,
// would copy from the kube Node) and the node's longhorn-manager, whose
// controllers stop while the node is down.
func (e *env) setNodeReady(node string, ready bool) error {
	if err := e.sim.SetNodeReady(e.ctx, node, ready); err != nil {
		return err
	}
	return e.lh.SetKubeNodeReady(node, ready)
}

// outcome logs one row of the table: what Longhorn did, what migrate did.
func (e *env) outcome(scenario, longhornDid, cmd string, code int, stderr string) {
	e.t.Helper()
	e.t.Logf("OUTCOME | %s | %s | %s | %s | exit %d | %s", scenario, e.release, longhornDid, cmd, code, tailLines(stderr, 2))
}

// statusOf runs `migrate status -o json`.
func (e *env) statusOf(vol string) map[string]any {
	e.t.Helper()
	out, errOut, code := e.plugin("migrate", "status", vol, "-o", "json")
	expectExit(e.t, "migrate status", 0, out, errOut, code)
	var st map[string]any
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		e.t.Fatalf("migrate status -o json: %v\n%s", err, out)
	}
	return st
}

// crashOnce crashes vol's engine of role once and waits until it did.
func (e *env) crashOnce(vol, role, what string) {
	e.t.Helper()
	fid := e.sim.Inject(lhsim.Fault{Kind: lhsim.EngineCrash, Volume: vol, Engine: role, Times: 1})
	e.await(what, func() bool { return e.sim.FaultHits(fid) > 0 })
}

// TestMigrateCrashDetachedOnLonghorn: "Original Engine Crash During
// Migration". On 1.7+ Longhorn detaches the volume and waits for one of the
// two csi-attacher tickets to go. scan names it, status says what to do,
// confirm without --to refuses and writes nothing, confirm --to node-b
// removes node-a's ticket and the volume is verified on node-b (the suite:
// "detach the volume from one of the nodes should make it fully attach to
// the other"). Before 1.7 Longhorn does not detach: migrate never reports
// a confirm that did not happen.
func TestMigrateCrashDetachedOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		vol := "vol-crash"
		e.readyToConfirm(vol)
		e.crashOnce(vol, lhsim.RoleOld, "the old engine crashed")
		ver := longhorn.MustParseVersion(rel)
		if !ver.HasVolumeAttachments() {
			// 1.4 detaches the volume and attaches it again on node-a
			// (auto-salvage), then prepares the migration again:
			// confirm waits through that and confirms.
			out, errOut, code := e.plugin("migrate", "confirm", vol, "--yes", "--timeout=2m", poll)
			v, es, rs := e.state(vol)
			e.outcome("original engine crash, then confirm", "detached, attached again on node-a, migration prepared again: "+safetext.OneLine(lhsim.Describe(v, es, rs)), "migrate confirm", code, errOut)
			expectExit(t, "migrate confirm after the source engine crashed", 0, out, errOut, code)
			e.waitFor("settled on node-b", vol, settled(nodeB))
			e.assertNoDamage(vol)
			return
		}
		if !ver.TicketLimits() {
			// 1.5 and 1.6 detach the volume and leave the migration
			// requested without a node (longhorn#8735). scan names it;
			// confirm refuses without a write and points at rollback,
			// which removes node-b's ticket: Longhorn attaches the
			// volume on node-a again.
			e.await("Longhorn left the migration without a node", func() bool {
				v, _, _ := e.state(vol)
				return v.Spec.NodeID == "" && v.Spec.MigrationNodeID == nodeB && v.Status.State == longhorn.VolumeStateDetached
			})
			out, errOut, code := e.plugin("scan", vol)
			if code != 1 || !strings.Contains(out, "MigrationWithoutNode") {
				t.Errorf("scan exit %d does not name MigrationWithoutNode:\n%s%s", code, out, errOut)
			}
			st := e.statusOf(vol)
			if next, _ := json.Marshal(st["next"]); st["phase"] != "NeedsAttention" || !strings.Contains(string(next), "migrate rollback") {
				t.Errorf("migrate status: phase %v next %s", st["phase"], next)
			}
			before := e.writtenByPlugin(vol)
			out, errOut, code = e.plugin("migrate", "confirm", vol, "--yes", poll)
			if after := e.writtenByPlugin(vol); code != 1 || !slices.Equal(after, before) || !strings.Contains(errOut, "migrate rollback") {
				t.Errorf("confirm of a migration Longhorn dropped: exit %d, wrote %v (before %v), want a refusal pointing at rollback:\n%s%s", code, after, before, out, errOut)
			}
			e.outcome("original engine crash, then confirm", "detached, migration left without a node (longhorn#8735)", "migrate confirm", code, errOut)
			out, errOut, code = e.plugin("migrate", "rollback", vol, "--yes", poll)
			expectExit(t, "migrate rollback of a migration left without a node", 0, out, errOut, code)
			if !strings.Contains(out, `"`+vol+`" attached to node-a`) {
				t.Errorf("stdout lacks the attached line:\n%s", out)
			}
			v, es, rs := e.state(vol)
			e.outcome("original engine crash, then rollback", "attached again on node-a: "+safetext.OneLine(lhsim.Describe(v, es, rs)), "migrate rollback", code, errOut)
			if !settled(nodeA)(v, es, rs) {
				t.Errorf("not settled on node-a:\n%s", lhsim.Describe(v, es, rs))
			}
			e.assertNoDamage(vol)
			return
		}
		e.await("Longhorn detached the volume with two csi tickets", func() bool {
			v, _, _ := e.state(vol)
			return v.Spec.NodeID == "" && v.Status.State == longhorn.VolumeStateDetached && len(e.csiTicketsOn(vol)) == 2
		})
		out, errOut, code := e.plugin("scan", vol)
		if code != 1 || !strings.Contains(out+errOut, "MigrationCrashDetached") {
			t.Errorf("scan exit %d does not name MigrationCrashDetached:\n%s%s", code, out, errOut)
		}
		st := e.statusOf(vol)
		next, _ := json.Marshal(st["next"])
		if st["phase"] != "CrashDetached" || !strings.Contains(string(next), "--to node-b") || !strings.Contains(string(next), "--to node-a") {
			t.Errorf("migrate status: phase %v next %s", st["phase"], next)
		}
		before := e.writtenByPlugin(vol)
		_, errOut, code = e.plugin("migrate", "confirm", vol, "--yes", poll)
		expectExit(t, "migrate confirm without --to", 1, "", errOut, code)
		if !strings.Contains(errOut, "without --to") {
			t.Errorf("the refusal does not ask for --to:\n%s", errOut)
		}
		if after := e.writtenByPlugin(vol); !slices.Equal(after, before) {
			t.Errorf("confirm refused but wrote:\nbefore %v\nafter  %v", before, after)
		}
		out, errOut, code = e.plugin("migrate", "confirm", vol, "--to", nodeB, "--yes", poll)
		expectExit(t, "migrate confirm --to node-b", 0, out, errOut, code)
		if !strings.Contains(out, `"`+vol+`" attached to node-b`) {
			t.Errorf("stdout lacks the attached line:\n%s", out)
		}
		e.outcome("original engine crash during migration", "detached, two csi tickets, event MigrationFailed", "migrate confirm --to node-b", code, errOut)
		v, es, rs := e.state(vol)
		if !settled(nodeB)(v, es, rs) {
			t.Errorf("not settled on node-b:\n%s", lhsim.Describe(v, es, rs))
		}
		if got := e.csiTicketsOn(vol); len(got) != 1 || got[0] != nodeB {
			t.Errorf("csi tickets after the way out: %v, want node-b only", got)
		}
		e.assertNoDamage(vol)
	})
}

// TestMigrateTargetNodeDownOnLonghorn: "Migration Rollback After Migration
// Node Down". The target node goes down while `migrate --confirm` waits for
// a migration engine that never gets ready: migrate rolls back within
// seconds, not after its whole --timeout, and the volume stays on node-a.
func TestMigrateTargetNodeDownOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		vol := "vol-target-down"
		e.attached(vol)
		fid := e.sim.Inject(lhsim.Fault{Kind: lhsim.MigrationEngineNeverReady, Volume: vol})
		go func() {
			// the node goes down once the migration has started
			_ = e.sim.Await(e.ctx, func() bool {
				v, _, _, err := e.sim.State(e.ctx, vol)
				return err == nil && v.Spec.MigrationNodeID == nodeB
			})
			_ = e.setNodeReady(nodeB, false)
		}()
		start := time.Now()
		out, errOut, code := e.plugin("migrate", vol, "--to", nodeB, "--confirm", "--yes", "--timeout=5m", poll)
		took := time.Since(start)
		expectExit(t, "migrate with the target node down", 1, out, errOut, code)
		if took > 4*time.Minute || !strings.Contains(errOut, "the target node node-b is down") {
			t.Errorf("migrate took %s (timeout 5m) and said:\n%s", took, errOut)
		}
		e.sim.ClearFault(fid)
		e.waitFor("settled on node-a", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return len(es) == 1 && es[0].Spec.NodeID == nodeA && v.Spec.MigrationNodeID == "" && v.Status.CurrentNodeID == nodeA
		})
		v, es, rs := e.state(vol)
		e.outcome("migration node down, rollback", "kept the volume on node-a: "+safetext.OneLine(lhsim.Describe(v, es, rs)), "migrate --confirm", code, errOut)
		e.assertNoDamageAfterNodeDown(vol, nodeB)
	})
}

// TestMigrateEngineRecreatedOnLonghorn: "Migration Confirmation After
// Migration Engine Crash". The migration engine crashes once after it was
// ready; Longhorn replaces it. `migrate confirm` waits through the
// replacement and confirms, instead of giving up on the poll that sees the
// error.
func TestMigrateEngineRecreatedOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		vol := "vol-mig-crash"
		e.readyToConfirm(vol)
		e.crashOnce(vol, lhsim.RoleNew, "the migration engine crashed")
		out, errOut, code := e.plugin("migrate", "confirm", vol, "--yes", "--timeout=3m", poll)
		e.outcome("migration engine crash, then confirm", "replaced the migration engine", "migrate confirm", code, errOut)
		expectExit(t, "migrate confirm after the migration engine crashed", 0, out, errOut, code)
		v, es, rs := e.state(vol)
		if !settled(nodeB)(v, es, rs) {
			t.Errorf("not settled on node-b:\n%s", lhsim.Describe(v, es, rs))
		}
		e.assertNoDamage(vol)
	})
}

// TestMigrateSourceNodeDownOnLonghorn: "Migration Confirmation/Rollback
// After Original Node Down". With the source node down, rollback refuses
// (Longhorn would wait for that node) and says to confirm; confirm is
// written toward the target (through the burst of writes Longhorn makes to
// a volume whose node just went down) and never rolls back toward the node
// that is down. Longhorn then waits for the old node's instance manager (the
// suite: until pod eviction ends it); lhsim keeps a down node's instances
// unknown, so here the node comes back instead, and the volume must settle
// on the target with nothing lost.
//
// Longhorn reacts to the node going down by stopping the migration engine
// off its node for a restart (the migration replica there is lost), and
// before 1.5 a confirm in that window is never finished (detect's
// ConfirmWithoutEngine). Which of the two comes first is a race, so each
// outcome is held to its own promise: the confirm refused with nothing
// written, then confirmed once node-a is back; or the confirm written and
// the volume settled; or, when Longhorn parked the engine from a read made
// before the confirm landed, ConfirmWithoutEngine reported with the step
// that repairs it, which is then run.
func TestMigrateSourceNodeDownOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		e.confirmSourceDown("vol-source-down", false)
	})
}

// TestMigrateSourceNodeDownEngineParkedOnLonghorn: the same, with Longhorn's
// reaction to the node going down made certain before the confirm: the
// migration engine parked off its node as Longhorn parks it. Before 1.5
// migrate must refuse the confirm with nothing written, and confirm once
// node-a is back; from 1.5 it confirms and Longhorn places the engine.
func TestMigrateSourceNodeDownEngineParkedOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		e.confirmSourceDown("vol-source-down-parked", true)
	})
}

// placeParked runs the step scan prints for ConfirmWithoutEngine (place the
// parked migration engine on spec.nodeID) and waits for Longhorn to settle
// the volume on node-b.
func (e *env) placeParked(vol string) {
	t := e.t
	var report string
	e.scanUntil("scan reports ConfirmWithoutEngine", vol, func(out, _ string, code int) bool {
		report = out
		return code == 1 && strings.Contains(out, `"type": "ConfirmWithoutEngine"`)
	}, "-o", "json")
	_, es, _ := e.state(vol)
	for _, x := range es {
		if !x.Spec.Active {
			e.runStep(patchStep(t, report, x.Name))
		}
	}
	e.waitFor("settled on node-b after the step", vol, settled(nodeB))
}

// confirmSourceDown is TestMigrateSourceNodeDownOnLonghorn's run; park
// parks the migration engine once node-a is down.
func (e *env) confirmSourceDown(vol string, park bool) {
	t, rel := e.t, e.release
	e.readyToConfirm(vol)
	if err := e.setNodeReady(nodeA, false); err != nil {
		t.Fatal(err)
	}
	if park {
		e.pausedWhile(func() {
			_, es, _ := e.state(vol)
			for _, x := range es {
				if !x.Spec.Active {
					e.patch(longhorn.Engines, x.Name, parkEngine)
				}
			}
		})
	}
	_, errOut, code := e.plugin("migrate", "rollback", vol, "--yes", poll)
	if code == 0 || !strings.Contains(errOut, "FAIL source node Ready") {
		t.Errorf("rollback toward a node that is down: exit %d\n%s", code, errOut)
	}
	ver := longhorn.MustParseVersion(rel)
	back := make(chan error, 1)
	actx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	go func() {
		// node-a returns once the confirm toward node-b is in place
		err := e.sim.Await(actx, func() bool { return confirmedToward(e, ver, vol, nodeB) })
		if err == nil {
			err = e.setNodeReady(nodeA, true)
		}
		back <- err
	}()
	before := e.writtenByPlugin(vol)
	out, errOut, code := e.plugin("migrate", "confirm", vol, "--yes", "--timeout=3m", poll)
	if strings.Contains(errOut, "Rolled back") || strings.Contains(errOut+out, "migrate rollback") {
		t.Errorf("migrate confirm rolled back or advised a rollback toward the node that is down:\n%s", errOut)
	}
	outcome := "confirmed"
	switch {
	case strings.Contains(errOut, "nothing was written"):
		outcome = "refused: the migration engine was parked"
		expectExit(t, "migrate confirm with the migration engine parked", 3, out, errOut, code)
		if ver.HasCurrentMigrationNodeID() {
			t.Errorf("Longhorn %s places the engine itself, but the confirm was refused:\n%s", rel, errOut)
		}
		if after := e.writtenByPlugin(vol); !slices.Equal(after, before) {
			t.Errorf("the confirm was refused but wrote:\nbefore %v\nafter  %v", before, after)
		}
		cancel()
		if err := <-back; err == nil {
			t.Errorf("node-a was brought back on a confirm toward node-b, yet the confirm was refused")
		}
		if err := e.setNodeReady(nodeA, true); err != nil {
			t.Fatal(err)
		}
		out, errOut, code = e.plugin("migrate", "confirm", vol, "--yes", "--timeout=3m", poll)
		if strings.Contains(errOut, string(detect.TypeConfirmWithoutEngine)) {
			// Longhorn 1.4 may park the engine again right after this
			// confirm too (the restart window of longhorn#6961)
			outcome += "; the engine parked again after the second confirm: reported, repaired by the step"
			expectExit(t, "migrate confirm that Longhorn cannot finish", 3, out, errOut, code)
			e.placeParked(vol)
			break
		}
		expectExit(t, "migrate confirm once node-a is back", 0, out, errOut, code)
	case strings.Contains(errOut, string(detect.TypeConfirmWithoutEngine)):
		outcome = "confirmed, the engine parked from an older read: reported, repaired by the step"
		expectExit(t, "migrate confirm that Longhorn cannot finish", 3, out, errOut, code)
		if err := <-back; err != nil {
			t.Fatalf("bringing node-a back: %v", err)
		}
		e.placeParked(vol)
	default:
		if !strings.Contains(errOut, "Confirmed toward node-b") {
			cancel()
			t.Fatalf("the confirm toward node-b was not written:\n%s", errOut)
		}
		if err := <-back; err != nil {
			t.Fatalf("bringing node-a back: %v", err)
		}
		expectExit(t, "migrate confirm with the source node down", 0, out, errOut, code)
	}
	v, es, rs := e.state(vol)
	e.outcome("original node down, confirm, node back ("+outcome+")", safetext.OneLine(lhsim.Describe(v, es, rs)), "migrate confirm", code, errOut)
	if !settled(nodeB)(v, es, rs) {
		t.Errorf("not settled on node-b:\n%s", lhsim.Describe(v, es, rs))
	}
	if park && !ver.HasCurrentMigrationNodeID() && !strings.HasPrefix(outcome, "refused") {
		// Longhorn placed the engine again before migrate read it (its
		// controllers resume after the park, and may sync the volume
		// before the node's instances are unknown): a confirm is then
		// right, and the branch above held it to settling on node-b
		t.Logf("Longhorn %s placed the migration engine again before the confirm (%s)", rel, outcome)
	}
	e.assertNoDamageAfterNodeDown(vol, nodeA)
}

// TestMigrateConfirmWithTargetNodeDownOnLonghorn: "Migration Confirmation
// After Migration Node Down". The suite confirms anyway and Longhorn keeps
// the volume attaching until the node returns; migrate refuses the confirm
// (its target is not Ready) without a write, so the volume stays served on
// node-a, and a rollback there is verified.
func TestMigrateConfirmWithTargetNodeDownOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		vol := "vol-confirm-target-down"
		e.readyToConfirm(vol)
		if err := e.setNodeReady(nodeB, false); err != nil {
			t.Fatal(err)
		}
		before := e.writtenByPlugin(vol)
		out, errOut, code := e.plugin("migrate", "confirm", vol, "--yes", poll)
		if code == 0 || !strings.Contains(errOut, "FAIL target node Ready") {
			t.Errorf("confirm toward a node that is down: exit %d\n%s%s", code, out, errOut)
		}
		if after := e.writtenByPlugin(vol); !slices.Equal(after, before) {
			t.Errorf("confirm refused but wrote:\nbefore %v\nafter  %v", before, after)
		}
		e.outcome("migration node down, then confirm", "kept the volume on node-a, the migration in place", "migrate confirm", code, errOut)
		out, errOut, code = e.plugin("migrate", "rollback", vol, "--yes", "--timeout=3m", poll)
		expectExit(t, "migrate rollback with the target node down", 0, out, errOut, code)
		v, es, rs := e.state(vol)
		e.outcome("migration node down, then rollback", safetext.OneLine(lhsim.Describe(v, es, rs)), "migrate rollback", code, errOut)
		if !settled(nodeA)(v, es, rs) {
			t.Errorf("not settled on node-a:\n%s", lhsim.Describe(v, es, rs))
		}
		e.assertNoDamageAfterNodeDown(vol, nodeB)
	})
}

// TestMigrateEngineCrashAfterConfirmOnLonghorn: the engine on the target
// crashes right after the confirm was written (the suite's "crash after the
// confirm"). Whatever Longhorn does next, migrate never rolls back toward
// the source or reports a verification that did not happen, and nothing is
// lost.
//
// Not in make test: on 1.5.3 Longhorn's end varies from run to run (see
// docs/testing.md, "Known differences"); REALTEST_CRASH_AFTER_CONFIRM=1
// runs it.
func TestMigrateEngineCrashAfterConfirmOnLonghorn(t *testing.T) {
	if os.Getenv("REALTEST_CRASH_AFTER_CONFIRM") == "" {
		t.Skip("Longhorn 1.5.3's end after this crash varies; set REALTEST_CRASH_AFTER_CONFIRM=1 to run")
	}
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		vol := "vol-crash-after-confirm"
		e.readyToConfirm(vol)
		_, es, _ := e.state(vol)
		var target string
		for _, eng := range es {
			if eng.Spec.NodeID == nodeB {
				target = eng.Name
			}
		}
		if target == "" {
			t.Fatalf("no engine on node-b")
		}
		ver := longhorn.MustParseVersion(rel)
		crashed := make(chan lhsim.FaultID, 1)
		actx, cancel := context.WithCancel(e.ctx)
		defer cancel()
		go func() {
			if e.sim.Await(actx, func() bool { return confirmedToward(e, ver, vol, nodeB) }) == nil {
				crashed <- e.sim.Inject(lhsim.Fault{Kind: lhsim.EngineCrash, Volume: vol, Engine: target, Times: 1})
			}
			close(crashed)
		}()
		out, errOut, code := e.plugin("migrate", "confirm", vol, "--yes", "--timeout=2m", poll)
		cancel()
		if fid, ok := <-crashed; !ok || e.sim.FaultHits(fid) == 0 {
			t.Fatalf("the engine on node-b did not crash after the confirm (exit %d):\n%s", code, errOut)
		}
		if strings.Contains(errOut, "Rolled back") || strings.Contains(errOut+out, "migrate rollback") {
			t.Errorf("migrate rolled back or advised a rollback after its confirm:\n%s", errOut)
		}
		v, es, rs := e.state(vol)
		e.outcome("engine crash after the confirm", safetext.OneLine(lhsim.Describe(v, es, rs)), "migrate confirm", code, errOut)
		switch code {
		case 0:
			if !strings.Contains(errOut, "Verified:") {
				t.Errorf("exit 0 without a verification:\n%s", errOut)
			}
			e.waitFor("settled on node-b", vol, settled(nodeB))
		case 3:
			// Not verified in time: Longhorn may fault the volume after
			// such a crash (seen on 1.5.3: every Replica CR removed,
			// their directories kept); migrate must not claim more.
			if strings.Contains(errOut, "Verified:") {
				t.Errorf("exit 3 but the run says verified:\n%s", errOut)
			}
			t.Logf("not verified on node-b; Longhorn %s ended: %s", rel, safetext.OneLine(lhsim.Describe(v, es, rs)))
		default:
			t.Errorf("exit %d, want 0 (verified) or 3 (not verified in time)", code)
		}
		if l := e.activeDeleted(); len(l) > 0 {
			t.Errorf("replicas deleted while active: %v", l)
		}
		if w := e.sim.WipedDirs(vol); len(w) > 0 {
			t.Errorf("data directories wiped: %v", w)
		}
	})
}

// TestMigrateEngineCrashAfterRollbackOnLonghorn: longhorn-tests' "Migration
// Rollback Before Migration Engine Crash" and "Migration Rollback Before
// Original Engine Crash": an engine crashes right after the rollback was
// written. The suite expects the volume to stay on node 0, healthy, with
// its data. migrate rollback waits through what Longhorn does, verifies the
// volume on node-a, and never confirms, or advises a confirm, toward node-b.
func TestMigrateEngineCrashAfterRollbackOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		ver := longhorn.MustParseVersion(rel)
		for _, tc := range []struct{ scenario, vol, on string }{
			{"Migration Rollback Before Migration Engine Crash", "vol-rb-crash-new", nodeB},
			{"Migration Rollback Before Original Engine Crash", "vol-rb-crash-old", nodeA},
		} {
			e.readyToConfirm(tc.vol)
			// by name: once Longhorn has removed the other engine the
			// simulator's roles no longer apply
			_, es, _ := e.state(tc.vol)
			eng := testenv.EngineOn(es, tc.on)
			if eng == nil {
				t.Fatalf("%s: no engine on %s", tc.scenario, tc.on)
			}
			crashed := make(chan lhsim.FaultID, 1)
			actx, cancel := context.WithCancel(e.ctx)
			go func() {
				// the request points at node-a alone: the rollback landed
				if e.sim.Await(actx, func() bool { return confirmedToward(e, ver, tc.vol, nodeA) }) == nil {
					crashed <- e.sim.Inject(lhsim.Fault{Kind: lhsim.EngineCrash, Volume: tc.vol, Engine: eng.Name, Times: 1})
				}
				close(crashed)
			}()
			out, errOut, code := e.plugin("migrate", "rollback", tc.vol, "--yes", "--timeout=3m", poll)
			cancel()
			fid, injected := <-crashed
			hit := injected && e.sim.FaultHits(fid) > 0
			v, es, rs := e.state(tc.vol)
			e.outcome(tc.scenario, fmt.Sprintf("crash hit %t: %s", hit, safetext.OneLine(lhsim.Describe(v, es, rs))), "migrate rollback", code, errOut)
			switch {
			case !injected:
				t.Fatalf("%s: the rollback never landed (exit %d):\n%s", tc.scenario, code, errOut)
			case !hit && tc.on == nodeA:
				t.Fatalf("%s: the engine on node-a did not crash (exit %d):\n%s", tc.scenario, code, errOut)
			case !hit:
				// Longhorn removed the migration engine before the crash
				// reached it: the plain rollback, still checked below.
				t.Logf("%s: the migration engine was gone before it could crash", tc.scenario)
			}
			expectExit(t, tc.scenario, 0, out, errOut, code)
			if !strings.Contains(errOut, "Rollback verified:") || strings.Contains(errOut+out, "migrate confirm") {
				t.Errorf("%s: not verified, or a confirm advised:\n%s", tc.scenario, errOut)
			}
			e.waitFor("settled on node-a", tc.vol, settled(nodeA))
			e.assertNoDamage(tc.vol)
		}
	})
}

// TestMigrateResumesWithoutNodeOnLonghorn: on 1.5 and 1.6, the source
// engine crashes while `migrate --confirm` waits for readiness; Longhorn
// detaches the volume and leaves the migration without a node
// (longhorn#8735). migrate removes the target's ticket itself and verifies
// the volume back on node-a (exit 1: not migrated, and why).
// Some runs Longhorn takes the other way instead (it depends on which
// engine status the VolumeAttachment controller reads while detaching): it
// confirms toward node-b by itself and attaches the old engine there,
// beside the migration engine, and stays stuck (EnginesOnOneNode); then
// the whole way out is checked (enginesOnOneNodeWayOut).
func TestMigrateResumesWithoutNodeOnLonghorn(t *testing.T) {
	t.Parallel()
	for _, rel := range releasesOrSkip(t) {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			if ver := longhorn.MustParseVersion(rel); !ver.HasVolumeAttachments() || ver.TicketLimits() {
				t.Skipf("Longhorn %s does not leave a migration without a node", rel)
			}
			vol := "vol-without-node"
			e := attachedEnv(t, rel, vol)
			never := e.sim.Inject(lhsim.Fault{Kind: lhsim.MigrationEngineNeverReady, Volume: vol})
			crash := make(chan lhsim.FaultID, 1)
			actx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			go func() {
				// the source engine crashes once the migration has started
				if e.sim.Await(actx, func() bool {
					v, _, _, err := e.sim.State(actx, vol)
					return err == nil && v.Spec.MigrationNodeID == nodeB
				}) == nil {
					crash <- e.sim.Inject(lhsim.Fault{Kind: lhsim.EngineCrash, Volume: vol, Engine: lhsim.RoleOld, Times: 1})
				}
				close(crash)
			}()
			out, errOut, code := e.plugin("migrate", vol, "--to", nodeB, "--confirm", "--yes", "--timeout=3m", poll)
			cancel()
			e.sim.ClearFault(never)
			if fid, ok := <-crash; !ok || e.sim.FaultHits(fid) == 0 {
				t.Fatalf("the source engine did not crash (exit %d):\n%s", code, errOut)
			}
			if strings.Contains(errOut, string(detect.TypeEnginesOnOneNode)) {
				e.enginesOnOneNodeWayOut(vol, out, errOut, code)
				return
			}
			v, es, rs := e.state(vol)
			e.outcome("original engine crash while migrate waits", "detached, migration left without a node (longhorn#8735)", "migrate --confirm", code, errOut)
			expectExit(t, "migrate after the source engine crashed", 1, out, errOut, code)
			if !strings.Contains(errOut, "attached again and verified on node-a") || !strings.Contains(out, `"`+vol+`" attached to node-a`) {
				t.Errorf("migrate did not resume the volume on node-a:\n%s%s", out, errOut)
			}
			if !settled(nodeA)(v, es, rs) {
				t.Errorf("not settled on node-a:\n%s", lhsim.Describe(v, es, rs))
			}
			e.assertNoDamage(vol)
		})
	}
}

// enginesOnOneNodeWayOut checks migrate's report of EnginesOnOneNode, then
// fix, then the rollback of the migration node-a's csi ticket asks for
// once Longhorn has ended the stuck one: the volume settles on node-b with
// nothing lost.
func (e *env) enginesOnOneNodeWayOut(vol, out, errOut string, code int) {
	t := e.t
	t.Helper()
	e.outcome("original engine crash while migrate waits", "confirmed by Longhorn onto node-b beside the migration engine: stuck (EnginesOnOneNode)", "migrate --confirm, then fix, then migrate rollback", code, errOut)
	expectExit(t, "migrate after Longhorn confirmed onto one node", cmdutil.ExitAttention, out, errOut, code)
	if !strings.Contains(errOut, "fix "+vol) {
		t.Errorf("migrate did not name the repair:\n%s", errOut)
	}
	e.waitFor("still stuck with two engines on node-b", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
		return len(es) == 2 && v.Status.CurrentMigrationNodeID == nodeB && v.Spec.NodeID == nodeB
	})
	out, errOut, code = e.plugin("fix", vol, "--yes", "--timeout=3m")
	if code != 0 && !strings.Contains(out+errOut, string(detect.TypeMigrationReplicaChurn)) {
		// the migration node-a's ticket starts may adopt the deleted
		// engine's clones and churn (explorer E29): reported, rolled back
		// below; anything else is a failure
		expectExit(t, "fix of the engines on one node", 0, out, errOut, code)
	}
	if !strings.Contains(out, "deleted") {
		t.Errorf("fix did not delete the extra engine:\n%s%s", out, errOut)
	}
	e.waitFor("the migration node-a's ticket asks for", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Spec.NodeID == nodeB && v.Spec.MigrationNodeID == nodeA
	})
	out, errOut, code = e.plugin("migrate", "rollback", vol, "--yes", "--timeout=3m", poll)
	expectExit(t, "migrate rollback of the migration to node-a", 0, out, errOut, code)
	e.waitFor("settled on node-b", vol, settled(nodeB))
	e.assertNoDamage(vol)
}

// confirmedToward tells whether the release's confirm toward node is in
// place: spec.nodeID on 1.4, the other node's csi ticket gone on 1.5+.
func confirmedToward(e *env, ver longhorn.Version, vol, node string) bool {
	if !ver.HasVolumeAttachments() {
		v, _, _, err := e.sim.State(e.ctx, vol)
		return err == nil && v.Spec.NodeID == node && v.Spec.MigrationNodeID == ""
	}
	va, err := e.sim.VolumeAttachment(e.ctx, vol)
	if err != nil || va == nil {
		return false
	}
	tickets := va.CSITickets()
	return len(tickets) == 1 && tickets[0].NodeID == node
}
