package fixwatch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The seed's bug, produced while the guard watches, is repaired once it has
// lasted --settle: the guard's own timestamps show it waited, and the
// simulator converges (one engine, replicas flipped, no data lost, no more
// BUG errors). Cancelling the context (main does that on SIGTERM and
// Ctrl-C) ends the guard with a summary and exit 0.
func TestGuardRepairsTheBugAfterSettle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ version, verb string }{
		{"v1.4.3", "deactivated"},
		{"v1.5.1", "deleted"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			e := newSim(t, tc.version, "")
			vol := "vol-bug"
			e.CreateAttached(vol)
			dir := filepath.Join(t.TempDir(), "backup")
			g := startGuard(t, e.Ctx, cluster.KubeconfigPath(), e.NS, "--yes", "--settle", settle.String(), "--backup-dir", dir, "--timeout", "60s")

			old, mig := e.StartMigration(vol)
			fid := e.confirmWithFault(vol)
			out := g.awaitOutcome(e.Ctx, vol, 1)
			if out.Result != fix.ResultRepaired {
				t.Errorf("outcome %s: %s", out.Result, out.Detail)
			}
			e.ExpectConverged(vol, testenv.NodeB, mig)
			if e.Sim.FaultHits(fid) != 1 {
				t.Errorf("the injected delete failure fired %d times", e.Sim.FaultHits(fid))
			}
			if !containsAny(e.Sim.SyncErrors(vol), "BUG: found the second active engine") {
				t.Error("the simulator never reported the BUG error: the bug was not produced")
			}

			res := g.stop()
			if res.Code != 0 {
				t.Errorf("exit %d", res.Code)
			}
			stdout, stderr := parseLines(t, "stdout", res.Stdout), parseLines(t, "stderr", res.Stderr)
			seen, ok := firstLine(stdout, `volume.longhorn.io "vol-bug" MultipleActiveEngines`, "the guard will")
			if !ok {
				t.Fatal("no MultipleActiveEngines line")
			}
			acted, ok := firstLine(stdout, `engine.longhorn.io "`+old+`" `+tc.verb)
			if !ok {
				t.Fatalf("no %q line for %s", tc.verb, old)
			}
			if waited := acted.at.Sub(seen.at); waited < settle {
				t.Errorf("acted %s after the state was first seen, before --settle %s", waited, settle)
			}
			if _, ok := firstLine(stdout, `volume.longhorn.io "vol-bug" has stayed repairable for`); !ok {
				t.Error("no testenv.Settled line")
			}
			if _, ok := firstLine(stdout, `volume.longhorn.io "vol-bug" repaired: verified: 1 engine(s): `+mig); !ok {
				t.Error("no repaired line")
			}
			if _, ok := firstLine(stdout, `engine.longhorn.io "`+mig+`" `+tc.verb); ok {
				t.Errorf("the survivor %s was written", mig)
			}
			if countLines(stdout, "engine.longhorn.io \""+old+"\" changed:")+countLines(stdout, "engine.longhorn.io \""+mig+"\" added:") == 0 {
				t.Error("no engine events logged")
			}
			testenv.Contains(t, "stderr", res.Stderr, "watching volumes, engines, replicas", "stopping: interrupted (SIGTERM or Ctrl-C)",
				"repairs: 1 repaired; 0 volume(s) need attention")
			if _, ok := firstLine(stderr, "Summary: watched namespace "+e.NS); !ok {
				t.Error("no summary")
			}
			// The settle wait is progress: on stderr, with the engines, never on stdout.
			if _, ok := firstLine(stderr, `volume "vol-bug" settling before repair`, "repairs at", "engines: "); !ok {
				t.Error("no settling progress line on stderr")
			}
			lacks(t, "stdout", res.Stdout, "settling before repair", "waiting for volume")
			lacks(t, "output", res.Stdout+res.Stderr, "\x1b[")

			log := testenv.ReadFile(t, filepath.Join(dir, fix.ActionLogName))
			testenv.Contains(t, "actions.log", log, "guard start namespace="+e.NS, "engine="+old+" ok", "verify volume=vol-bug ok", "guard stop")
			if _, err := os.Stat(filepath.Join(dir, "vol-bug.yaml")); err != nil {
				t.Errorf("no backup: %v", err)
			}
		})
	}
}

// A normal live migration under the guard is never touched, on a release
// with the bug and on a fixed one: the guard sees it (engine events,
// MigrationInFlight) but never classifies it as repairable, writes nothing
// and ends with nothing to report.
func TestGuardLeavesANormalMigrationAlone(t *testing.T) {
	t.Parallel()
	testenv.PerRelease(t, []string{"v1.4.3", "v1.5.1", "v1.6.0"}, func(t *testing.T, version string) {
		e := newSim(t, version, "")
		vol := "vol-migrating"
		e.CreateAttached(vol)
		dir := filepath.Join(t.TempDir(), "backup")
		g := startGuard(t, e.Ctx, cluster.KubeconfigPath(), e.NS, "--yes", "--settle", settle.String(), "--backup-dir", dir)

		_, mig := e.StartMigration(vol)
		_, es0, _ := e.State(vol)
		migUID := testenv.EngineOn(es0, testenv.NodeB).UID
		e.Confirm(vol)
		g.l.await(t, e.Ctx, g.done, "the guard saw the migration end", func(l *listeners) bool {
			return l.seen[vol][detect.TypeMigrationInFlight] && l.classes[vol] == ""
		})

		res := g.stop()
		if res.Code != 0 {
			t.Errorf("exit %d", res.Code)
		}
		if g.everSeen(vol, detect.TypeMultipleActiveEngines) {
			t.Error("the guard classified a normal migration as MultipleActiveEngines")
		}
		if !g.everSeen(vol, detect.TypeMigrationInFlight) {
			t.Error("the guard never saw the migration")
		}
		lacks(t, "stdout", res.Stdout, "MultipleActiveEngines", "repairing", "deactivated", "deleted\n", "(dry run)")
		testenv.Contains(t, "stdout", res.Stdout, `MigrationInFlight`, `engine.longhorn.io "`+mig+`" changed:`)
		testenv.Contains(t, "stderr", res.Stderr, "repairs: none; 0 volume(s) need attention")
		if len(g.outcomes(vol)) != 0 {
			t.Errorf("repairs ran: %+v", g.outcomes(vol))
		}
		lacks(t, "actions.log", testenv.ReadFile(t, filepath.Join(dir, fix.ActionLogName)), "attempt", "recheck")

		_, es, _ := e.State(vol)
		if len(es) != 1 || es[0].UID != migUID {
			t.Errorf("engines after the migration: %+v", es)
		}
		for _, mf := range e.Get(longhorn.Engines, mig).GetManagedFields() {
			if mf.Manager == "kubectl-longhorn-engines" {
				t.Errorf("the guard wrote engine %s: %+v", mig, mf)
			}
		}
	})
}

// SIGTERM (a cancelled context) while a bug waits out a long settle time
// ends the guard at once with a summary naming the volume, exit 1, and no
// write.
func TestGuardStopsOnSignalWithSummary(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.4.3", "")
	vol := "vol-pending"
	old, _ := e.produceBug(vol)
	g := startGuard(t, e.Ctx, cluster.KubeconfigPath(), e.NS, "--yes", "--settle", "1h", "--backup-dir", t.TempDir())
	g.awaitClass(e.Ctx, vol, detect.TypeMultipleActiveEngines)
	t0 := time.Now()
	res := g.stop()
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("took %s to stop", d)
	}
	if res.Code != cmdutil.ExitNeedsAction {
		t.Errorf("exit %d, want %d", res.Code, cmdutil.ExitNeedsAction)
	}
	testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol-pending" MultipleActiveEngines`, "if this lasts 1h0m0s")
	testenv.Contains(t, "stderr", res.Stderr, "stopping: interrupted (SIGTERM or Ctrl-C)", "repairs: none; 1 volume(s) need attention",
		`needs attention: volume.longhorn.io "vol-pending": MultipleActiveEngines for `, "not repaired (it must stay so for --settle 1h0m0s)")
	lacks(t, "stdout", res.Stdout, "repairing", "deactivated")
	_, es, _ := e.State(vol)
	for _, x := range es {
		if x.Name == old && !x.Spec.Active {
			t.Error("the stale engine was deactivated")
		}
	}
}

// --for ends the guard by itself, with a summary and exit 0 when nothing
// needs attention.
func TestGuardEndsAfterFor(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.4.3", "")
	e.CreateAttached("vol-idle")
	g := startGuard(t, e.Ctx, cluster.KubeconfigPath(), e.NS, "--yes", "--for", "1s", "--backup-dir", t.TempDir())
	res := g.wait()
	if res.Code != 0 {
		t.Errorf("exit %d", res.Code)
	}
	stderr := parseLines(t, "stderr", res.Stderr)
	start, ok1 := firstLine(stderr, "watching volumes, engines, replicas in namespace "+e.NS, "(Longhorn v1.4.3, 1 volume(s)) for 1s")
	stop, ok2 := firstLine(stderr, "stopping: --for 1s elapsed")
	if !ok1 || !ok2 {
		t.Fatal("no start or stop line")
	}
	_, after, _ := strings.Cut(start.text, ", until ")
	until, err := time.Parse(time.RFC3339Nano, strings.TrimSuffix(strings.Fields(after)[0], ";"))
	if err != nil {
		t.Fatalf("start line %q: %v", start.text, err)
	}
	if stop.at.Before(until) {
		t.Errorf("stopped at %s, before the announced end %s", stop.at, until)
	}
	testenv.Contains(t, "stderr", res.Stderr, "Summary: watched namespace "+e.NS, "(--for 1s elapsed); 1 volume(s); repairs: none; 0 volume(s) need attention")
}

// A dry run needs no --yes: the guard reports, once, what it would do
// after the settle time (client: nothing sent; server: the write is
// validated by the API server and not persisted), and changes nothing.
func TestGuardDryRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, line, outcome string }{
		{"client", "deactivated (dry run)", "dry-run: client dry run, nothing sent: would write "},
		{"server", "deactivated (server dry run)", "dry-run: server dry run accepted, nothing persisted: would write "},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			e := newSim(t, "v1.4.3", "")
			vol := "vol-dry"
			old, _ := e.produceBug(vol)
			_, es0, _ := e.State(vol)
			g := startGuard(t, e.Ctx, cluster.KubeconfigPath(), e.NS, "--dry-run="+tc.mode, "--settle", settle.String())
			out := g.awaitOutcome(e.Ctx, vol, 1)
			if out.Result != fix.ResultDryRun {
				t.Errorf("outcome %s: %s", out.Result, out.Detail)
			}
			res := g.stop()
			if res.Code != 0 {
				t.Errorf("exit %d", res.Code)
			}
			testenv.Contains(t, "stdout", res.Stdout, `engine.longhorn.io "`+old+`" `+tc.line, `volume.longhorn.io "vol-dry" `+tc.outcome)
			testenv.Contains(t, "stderr", res.Stderr, "--dry-run="+tc.mode+": ", "repairs: 1 dry-run; 0 volume(s) need attention")
			lacks(t, "stderr", res.Stderr, "Backups and the action log")
			if len(g.outcomes(vol)) != 1 {
				t.Errorf("%d dry runs of one state", len(g.outcomes(vol)))
			}
			_, es, _ := e.State(vol)
			if rv(es, old) != rv(es0, old) || rv(es, old) == "" {
				t.Errorf("engine %s changed in a dry run: resourceVersion %s, was %s", old, rv(es, old), rv(es0, old))
			}
		})
	}
}

// Without a terminal and without --yes the guard refuses to start: one
// error line, nothing watched.
func TestGuardNeedsYesWithoutTerminal(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.4.3", "")
	res := cli(t, cluster.KubeconfigPath()).Run(e.Ctx, "fix", "--watch", "-n", e.NS)
	if res.Code != cmdutil.ExitNeedsAction {
		t.Errorf("exit %d", res.Code)
	}
	if res.Stdout != "" || strings.Count(res.Stderr, "\n") != 1 || !strings.HasPrefix(res.Stderr, "error: stdin is not a terminal and --yes was not given") {
		t.Errorf("want one error line:\n%s", res)
	}
}

func rv(es []longhorn.Engine, name string) string {
	for i := range es {
		if es[i].Name == name {
			return es[i].ResourceVersion
		}
	}
	return ""
}

func containsAny(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}
