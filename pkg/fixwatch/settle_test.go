package fixwatch

import (
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// The settle rule, with times handed in: a repairable state is repaired
// only once it has lasted the settle time unchanged; any change of the
// engines restarts the wait; a state that goes away and comes back waits
// again; one repair at a time; a finished state is never repaired twice.
func TestTrackerSettles(t *testing.T) {
	const settle = time.Minute
	a := signature{keep: "uid-b", changed: "uid-a", action: detect.ActionDeactivate}
	b := signature{keep: "uid-b", changed: "uid-c", action: detect.ActionDeactivate}
	tr := newTracker(settle)

	if s := tr.observe("v", t0, a); s.repair || s.wait != settle {
		t.Fatalf("first sight: %+v", s)
	}
	if s := tr.observe("v", t0.Add(59*time.Second), a); s.repair || s.wait != time.Second {
		t.Fatalf("before settle: %+v", s)
	}
	// Another stale engine (re-created by uid): the wait starts again.
	if s := tr.observe("v", t0.Add(61*time.Second), b); s.repair || s.wait != settle {
		t.Fatalf("changed signature: %+v", s)
	}
	// Healthy for a moment, then the same state again: it waits again.
	tr.observe("v", t0.Add(70*time.Second), signature{})
	if s := tr.observe("v", t0.Add(80*time.Second), b); s.repair || s.wait != settle {
		t.Fatalf("state came back: %+v", s)
	}
	s := tr.observe("v", t0.Add(140*time.Second), b)
	if !s.repair {
		t.Fatalf("settled: %+v", s)
	}
	if got := tr.since("v"); !got.Equal(t0.Add(80 * time.Second)) {
		t.Errorf("since %s", got)
	}
	if s := tr.observe("v", t0.Add(141*time.Second), b); s.repair || s.wait != 0 {
		t.Fatalf("while repairing: %+v", s)
	}
	if retry := tr.finished("v", b, fix.Outcome{Result: fix.ResultRepaired}, t0.Add(150*time.Second)); retry {
		t.Error("repaired is retried")
	}
	if s := tr.observe("v", t0.Add(400*time.Second), b); s.repair || s.wait != 0 {
		t.Fatalf("after a final outcome: %+v", s)
	}
	// A new bug on the same volume later is a new state.
	if s := tr.observe("v", t0.Add(500*time.Second), a); s.repair || s.wait != settle {
		t.Fatalf("new state: %+v", s)
	}
}

// Skipped and failed repairs are tried again after another settle time, at
// most maxAttempts times; the last outcome then stays.
func TestTrackerRetriesSkippedRepairs(t *testing.T) {
	const settle = time.Second
	a := signature{keep: "k", changed: "s", action: detect.ActionDelete}
	tr := newTracker(settle)
	now := t0
	tr.observe("v", now, a)
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		now = now.Add(settle)
		if s := tr.observe("v", now, a); !s.repair {
			t.Fatalf("attempt %d not started: %+v", attempt, s)
		}
		retry := tr.finished("v", a, fix.Outcome{Result: fix.ResultSkipped}, now)
		if retry != (attempt < maxAttempts) {
			t.Fatalf("attempt %d: retry %t", attempt, retry)
		}
		if retry {
			if s := tr.observe("v", now, a); s.repair || s.wait != settle {
				t.Fatalf("retry %d does not wait: %+v", attempt, s)
			}
		}
	}
	if s := tr.observe("v", now.Add(time.Hour), a); s.repair {
		t.Fatal("repaired beyond maxAttempts")
	}
	if tr.get("v").final.Result != fix.ResultSkipped {
		t.Errorf("final %+v", tr.get("v").final)
	}
}

// Warnings the guard does not repair are reported only once they have
// lasted the settle time; info and repairable states at once.
func TestTrackerDelaysAlarms(t *testing.T) {
	tr := newTracker(time.Minute)
	if ok, _, _, _ := tr.report("v", "MigrationInFlight", false, t0); !ok {
		t.Error("info state not reported at once")
	}
	if ok, _, _, w := tr.report("v", "PendingCleanup critical", true, t0); ok || w != time.Minute {
		t.Errorf("alarm reported at once (wait %s)", w)
	}
	if ok, _, _, _ := tr.report("v", "PendingCleanup info", false, t0.Add(time.Second)); !ok {
		t.Error("the next state is not reported")
	}
	tr.report("v", "refused", true, t0.Add(2*time.Second))
	ok, prev, lasted, _ := tr.report("v", "refused", true, t0.Add(62*time.Second))
	if !ok || prev != "PendingCleanup info" || lasted != time.Minute {
		t.Errorf("lasting alarm: %t %q %s", ok, prev, lasted)
	}
	if ok, _, _, _ := tr.report("v", "refused", true, t0.Add(200*time.Second)); ok {
		t.Error("reported twice")
	}
}

// Only a finding fix would act on has a signature, and it pins the engines
// by uid.
func TestSignatureOf(t *testing.T) {
	bug := detect.Finding{Type: detect.TypeMultipleActiveEngines, Keep: "e-b", Stale: []string{"e-a"}, Action: detect.ActionDeactivate,
		Preconditions: []detect.Check{{Name: "x", OK: true}},
		Objects:       detect.Objects{Engines: []detect.EngineRef{{Name: "e-a", UID: "uid-a"}, {Name: "e-b", UID: "uid-b"}}}}
	if got := signatureOf(&bug); got != (signature{keep: "uid-b", changed: "uid-a", action: detect.ActionDeactivate}) {
		t.Errorf("signature %+v", got)
	}
	refused := bug
	refused.Preconditions = []detect.Check{{Name: "x", OK: false}}
	fixed := bug
	fixed.Action = detect.ActionNone
	pending := bug
	pending.Type = detect.TypePendingCleanup
	unknown := bug
	unknown.Stale = []string{"e-gone"}
	// replicas left active for a deleted engine: pinned by the replicas
	// fix repoints
	dangling := detect.Finding{Type: detect.TypeDanglingReplicas, Keep: "e-b", Action: detect.ActionSetReplicas,
		ReplicaChanges: []detect.ReplicaChange{{Replica: "r-2", ToEngine: "e-b", ToActive: true}, {Replica: "r-1", ToEngine: "e-b", ToActive: true}},
		Objects: detect.Objects{Engines: []detect.EngineRef{{Name: "e-b", UID: "uid-b"}},
			Replicas: []detect.ReplicaRef{{Name: "r-1", UID: "uid-r1"}, {Name: "r-2", UID: "uid-r2"}}}}
	if got := signatureOf(&dangling); got != (signature{keep: "uid-b", changed: "uid-r1,uid-r2", action: detect.ActionSetReplicas}) {
		t.Errorf("dangling: signature %+v", got)
	}
	danglingRefused := dangling
	danglingRefused.Action = detect.ActionNone
	danglingUnknown := dangling
	danglingUnknown.ReplicaChanges = []detect.ReplicaChange{{Replica: "r-gone", ToEngine: "e-b", ToActive: true}}
	for name, f := range map[string]*detect.Finding{"healthy": nil, "refused": &refused, "fixed release": &fixed, "pending cleanup": &pending, "unknown engine": &unknown,
		"dangling, no action": &danglingRefused, "dangling, unknown replica": &danglingUnknown} {
		if got := signatureOf(f); !got.empty() {
			t.Errorf("%s: signature %+v", name, got)
		}
	}
}

// The write verbs checked at start follow detect's release table and the
// strategy.
func TestWriteVerbs(t *testing.T) {
	for _, tc := range []struct {
		version string
		s       fix.Strategy
		dry     cmdutil.DryRun
		want    string
	}{
		{"v1.4.3", fix.StrategyAuto, cmdutil.DryRunNone, "patch"},
		{"v1.3.2", fix.StrategyAuto, cmdutil.DryRunServer, "patch"},
		{"v1.5.1", fix.StrategyAuto, cmdutil.DryRunNone, "patch,delete"},
		{"v1.5.1", fix.StrategyDeactivate, cmdutil.DryRunNone, "patch"},
		// delete only: no engine is deactivated with --strategy=delete
		{"v1.5.1", fix.StrategyDelete, cmdutil.DryRunNone, "delete"},
		{"v1.4.3", fix.StrategyDelete, cmdutil.DryRunNone, ""},
		{"v1.4.3", fix.StrategyAuto, cmdutil.DryRunClient, ""},
		// fixed releases repair a volume stuck before the upgrade, up to 1.12
		{"v1.6.0", fix.StrategyAuto, cmdutil.DryRunNone, "patch"},
		{"v1.4.4", fix.StrategyAuto, cmdutil.DryRunNone, "patch"},
		{"v1.10.0", fix.StrategyDelete, cmdutil.DryRunNone, ""},
		{"v1.12.0", fix.StrategyAuto, cmdutil.DryRunNone, "patch"},
		{"v1.13.0", fix.StrategyAuto, cmdutil.DryRunNone, ""},
	} {
		got := writeVerbs(longhorn.MustParseVersion(tc.version), tc.s, tc.dry)
		if g := joinOrEmpty(got); g != tc.want {
			t.Errorf("%s %s %s: %q, want %q", tc.version, tc.s, tc.dry, g, tc.want)
		}
	}
}

func joinOrEmpty(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}
