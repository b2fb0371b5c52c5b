package fix_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// fix through a proxy that loses answers, resets connections and refuses
// writes. A write is sent at most once; when its answer is lost, fix reads
// the engine back and reports (and logs) what the server holds.

// fixUnderFault runs fix args through the proxy p with rule as its only
// fault (its log cleared) and a backup folder of its own, which it
// returns; the run must end with code.
func fixUnderFault(t *testing.T, ctx context.Context, p *faultproxy.Proxy, kc string, rule faultproxy.Rule, code int, args ...string) (clitest.Result, string) {
	t.Helper()
	p.Clear()
	p.ResetLog()
	p.Add(rule)
	dir := filepath.Join(t.TempDir(), "backup")
	res := cli(t, kc, fix.Hooks{}).Run(ctx, fixArgs(append(args, "--backup-dir", dir)...)...)
	if res.Code != code {
		t.Errorf("exit %d, want %d", res.Code, code)
	}
	return res, dir
}

// expectReported: the run's output holds out and the action log in dir
// holds log.
func expectReported(t *testing.T, res clitest.Result, dir string, out []string, log ...string) {
	t.Helper()
	testenv.Contains(t, "output", res.Stdout+res.Stderr, out...)
	testenv.Contains(t, "action log", readFile(t, filepath.Join(dir, fix.ActionLogName)), log...)
}

// lostWrite is a case of a write under a fault that loses its answer
// (applied: the server got it) or stops it on the way.
type lostWrite struct {
	name    string
	fault   faultproxy.Fault
	applied bool
	code    int
	out     []string
	log     string
}

func TestFixWritesUnderFaults(t *testing.T) {
	p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
	tests := []struct {
		name    string
		version string
		verb    string
		rule    faultproxy.Rule
		args    []string
		// applied: the engine ends changed; code is the exit code.
		applied  bool
		code     int
		sent     int // writes that reached the server
		out, log []string
	}{
		{"deactivate, reset after forwarding", testenv.L14a, "patch", faultproxy.Rule{Fault: faultproxy.ResetAfter, First: 1}, nil,
			true, 0, 1, []string{"deactivated", "was lost", "spec.active is now false"}, []string{"readBack=applied"}},
		{"deactivate, answer timed out", testenv.L14a, "patch", faultproxy.Rule{Fault: faultproxy.TimeoutAfter, First: 1}, []string{"--request-timeout", "3s"},
			true, 0, 1, []string{"deactivated", "was lost"}, []string{"readBack=applied"}},
		{"deactivate, reset before forwarding", testenv.L14a, "patch", faultproxy.Rule{Fault: faultproxy.ResetBefore, First: 1}, nil,
			false, 1, 0, []string{"did not happen", "it was not retried"}, []string{"readBack=not-applied"}},
		{"deactivate, timeout before forwarding", testenv.L14a, "patch", faultproxy.Rule{Fault: faultproxy.Timeout, First: 1}, []string{"--request-timeout", "2s"},
			false, 1, 0, []string{"did not happen"}, []string{"readBack=not-applied"}},
		{"deactivate, 500", testenv.L14a, "patch", faultproxy.Rule{Fault: faultproxy.Status500, First: 1}, nil,
			false, 1, 0, []string{"did not happen"}, []string{"readBack=not-applied"}},
		{"deactivate, refused by a conflict", testenv.L14a, "patch", faultproxy.Rule{Fault: faultproxy.Status409, First: 1}, nil,
			false, 1, 0, []string{"changed after the re-check", "nothing was written"}, []string{"error="}},
		{"delete, reset after forwarding", testenv.L15a, "delete", faultproxy.Rule{Fault: faultproxy.ResetAfter, First: 1}, nil,
			true, 0, 1, []string{"deleted", "was lost"}, []string{"readBack=applied"}},
		{"delete, reset before forwarding", testenv.L15a, "delete", faultproxy.Rule{Fault: faultproxy.ResetBefore, First: 1}, nil,
			false, 1, 0, []string{"did not happen"}, []string{"readBack=not-applied"}},
		{"delete, throttled then accepted", testenv.L15a, "delete", faultproxy.Rule{Fault: faultproxy.Status429, RetryAfter: 1, First: 2}, nil,
			true, 0, 1, []string{"deleted"}, []string{"ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.TwoActiveEngines(tt.version, "vol-a"))
			stale := testenv.EngineName(tt.version, "vol-a", 0)
			keep := testenv.EngineName(tt.version, "vol-a", 1)
			keepBefore := getEngine(t, ctx, keep).GetResourceVersion()
			staleBefore := getEngine(t, ctx, stale).GetResourceVersion()
			rule := tt.rule
			rule.Verb, rule.Resource, rule.Name = tt.verb, longhorn.Engines.Plural, stale
			res, dir := fixUnderFault(t, ctx, p, kc, rule, tt.code, append([]string{"vol-a", "--yes", "--wait=false"}, tt.args...)...)
			expectReported(t, res, dir, tt.out, tt.log...)
			if n := p.Count(tt.verb, longhorn.Engines.Plural, stale); n != tt.sent {
				t.Errorf("%d %s requests reached the server, want %d (a write is never resent)", n, tt.verb, tt.sent)
			}
			if n := p.Count("patch", "", keep) + p.Count("delete", "", keep) + p.Count("update", "", ""); n != 0 {
				t.Errorf("%d writes to the engine to keep or updates", n)
			}
			if got := getEngine(t, ctx, keep).GetResourceVersion(); got != keepBefore {
				t.Errorf("the engine to keep changed: %s -> %s", keepBefore, got)
			}
			u, err := ri(longhorn.Engines).Get(ctx, stale, metav1.GetOptions{})
			changed := false
			switch {
			case err != nil || u.GetDeletionTimestamp() != nil:
				changed = true
			default:
				active, _, _ := unstructured.NestedBool(u.Object, "spec", "active")
				changed = !active || u.GetResourceVersion() != staleBefore
			}
			if changed != tt.applied {
				t.Errorf("stale engine changed=%t, want %t", changed, tt.applied)
			}
		})
	}
}

// The reads of the plan and the re-check retry throttling and transient
// errors; a read that keeps failing stops fix before any write (exit 2).
func TestFixReadsUnderFaults(t *testing.T) {
	p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
	for _, tc := range []struct {
		name string
		rule faultproxy.Rule
		code int
	}{
		{"throttled lists", faultproxy.Rule{Verb: "list", Fault: faultproxy.Status429, RetryAfter: 1, Every: 2, First: 6}, 0},
		{"503 on the re-check", faultproxy.Rule{Verb: "list", Resource: "engines", Fault: faultproxy.Status503, Every: 2, First: 8}, 0},
		{"reset lists", faultproxy.Rule{Verb: "list", Resource: "replicas", Fault: faultproxy.ResetBefore, First: 2}, 0},
		{"engines unreadable", faultproxy.Rule{Verb: "list", Resource: "engines", Fault: faultproxy.Status500}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol-a"))
			before := versions(t, ctx)
			res, dir := fixUnderFault(t, ctx, p, kc, tc.rule, tc.code, "vol-a", "--yes", "--wait=false", "--request-timeout", "20s")
			if tc.code == 2 {
				if strings.Count(res.Stderr, "error: ") != 1 {
					t.Errorf("want one error line")
				}
				testenv.AssertUnchanged(t, before, versions(t, ctx))
				noFile(t, dir)
				return
			}
			if p.Count("patch", "engines", testenv.EngineName(testenv.L14a, "vol-a", 0)) != 1 {
				t.Errorf("the deactivation was not sent exactly once")
			}
		})
	}
}
