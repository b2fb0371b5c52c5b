package migrate_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// migrate through a proxy that loses answers, resets connections and
// refuses writes. Each of migrate's writes (start, confirm, rollback) is
// sent at most once; when its answer is lost, migrate reads the volume back
// and goes on from what the server holds.

// writtenResource is what migrate's writes patch on version: the Volume
// (spec.migrationNodeID, spec.nodeID) before 1.5, its VolumeAttachment
// (tickets, named like the volume) from 1.5.
func writtenResource(version string) string {
	if longhorn.MustParseVersion(version).HasVolumeAttachments() {
		return longhorn.VolumeAttachments.Plural
	}
	return longhorn.Volumes.Plural
}

// migrating: the volume still serves I/O from node-a and a migration to
// node-b is in place (what a confirm or a rollback has left to do).
func (e *env) migrating(vol string) bool {
	v, es, _ := e.State(vol)
	if v.Spec.NodeID != nodeA || len(es) != 2 {
		return false
	}
	if e.Sim.Version().HasVolumeAttachments() {
		for _, tk := range e.va(vol).Spec.AttachmentTickets {
			if tk.NodeID == nodeB {
				return true
			}
		}
		return false
	}
	return v.Spec.MigrationNodeID == nodeB
}

func TestMigrateWritesUnderFaults(t *testing.T) {
	t.Parallel()
	type tc struct {
		name string
		// step is the write the fault hits: the start of `migrate
		// --confirm`, or the only write of `migrate confirm` or `migrate
		// rollback` after a migration made ready without the proxy.
		step string
		rule faultproxy.Rule
		args []string
		code int
		// sent: writes of the patched resource that reached the server.
		sent int
		// end: "node-a" or "node-b" (testenv.Settled there, nothing lost), or
		// "migrating" (the migration still in place).
		end  string
		errs []string
	}
	tests := []tc{
		{"start, reset after forwarding", "start", faultproxy.Rule{Fault: faultproxy.ResetAfter, First: 1}, nil,
			0, 2, nodeB, []string{"the start landed although the request reported", "Confirmed:"}},
		{"start, answer timed out", "start", faultproxy.Rule{Fault: faultproxy.TimeoutAfter, First: 1}, []string{"--request-timeout", "3s"},
			0, 2, nodeB, []string{"the start landed although the request reported"}},
		{"start, reset before forwarding", "start", faultproxy.Rule{Fault: faultproxy.ResetBefore, First: 1}, nil,
			cmdutil.ExitNeedsAction, 0, nodeA, []string{"start failed, nothing was changed"}},
		{"start, 500", "start", faultproxy.Rule{Fault: faultproxy.Status500, First: 1}, nil,
			cmdutil.ExitNeedsAction, 0, nodeA, []string{"start failed, nothing was changed"}},
		{"start, refused by a conflict", "start", faultproxy.Rule{Fault: faultproxy.Status409, First: 1}, nil,
			0, 2, nodeB, []string{"changed since it was read (conflict); deciding again from a fresh read", "Confirmed:"}},
		// Longhorn rewrites a volume several times a second for a while
		// after its node goes down: a run of conflicts is waited out.
		{"confirm, refused by eight conflicts in a row", "confirm", faultproxy.Rule{Fault: faultproxy.Status409, First: 8}, nil,
			0, 1, nodeB, []string{"changed since it was read (conflict); deciding again from a fresh read", "Verified:"}},
		{"start, throttled then accepted", "start", faultproxy.Rule{Fault: faultproxy.Status429, RetryAfter: 1, First: 1}, nil,
			0, 2, nodeB, []string{"Confirmed:"}},
		{"confirm, reset after forwarding", "confirm", faultproxy.Rule{Fault: faultproxy.ResetAfter, First: 1}, nil,
			0, 1, nodeB, []string{"the confirm landed although the request reported", "Verified:"}},
		{"confirm, reset before forwarding", "confirm", faultproxy.Rule{Fault: faultproxy.ResetBefore, First: 1}, nil,
			cmdutil.ExitNeedsAction, 0, "migrating", []string{"confirm failed, nothing was changed"}},
		{"rollback, reset after forwarding", "rollback", faultproxy.Rule{Fault: faultproxy.ResetAfter, First: 1}, nil,
			0, 1, nodeA, []string{"the rollback landed although the request reported", "Rollback verified:"}},
		{"rollback, reset before forwarding", "rollback", faultproxy.Rule{Fault: faultproxy.ResetBefore, First: 1}, nil,
			cmdutil.ExitAttention, 0, "migrating", []string{"the rollback could not be written", "migrate rollback"}},
	}
	for _, version := range restAndVA {
		for _, tt := range tests {
			t.Run(version+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, version)
				p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
				vol := "vol-faults"
				e.createAttached(lhsim.VolumeOptions{Migratable: true}, vol)
				args := []string{"migrate", vol, "--to", nodeB, "--confirm", "--yes", poll}
				if tt.step != "start" {
					expectCode(t, e.run("migrate", vol, "--to", nodeB, "--yes", poll), 0)
					args = []string{"migrate", tt.step, vol, "--yes", poll}
				}
				rule := tt.rule
				rule.Verb, rule.Resource, rule.Name = "patch", writtenResource(version), vol
				p.Add(rule)
				res := clitest.New(t, kc).Run(e.Ctx, append(append(args, tt.args...), "-n", e.NS)...)
				expectCode(t, res, tt.code)
				expectContains(t, "stderr", res.Stderr, tt.errs...)
				if n := p.Count("patch", rule.Resource, vol); n != tt.sent {
					t.Errorf("%d patches of %s/%s reached the server, want %d", n, rule.Resource, vol, tt.sent)
				}
				if tt.end == "migrating" {
					if !e.migrating(vol) {
						v, es, rs := e.State(vol)
						t.Errorf("the migration is no longer in place:\n%s", lhsim.Describe(v, es, rs))
					}
					e.ExpectNoDataLoss(vol)
					return
				}
				e.WaitFor("testenv.Settled on "+tt.end, vol, testenv.Settled(tt.end))
				e.ExpectNoDataLoss(vol)
			})
		}
	}
}

// TestSignalDuringConfirm: a signal while the confirm's request is on its
// way. Not sent yet: the run rolls back and verifies, and the exit code
// names the signal. Sent, the answer not back: migrate reads the confirm
// back, says it was sent and cannot be undone, and asks for a person (exit
// 3, which a signal never hides); Longhorn finishes the migration.
func TestSignalDuringConfirm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		version string
		sig     os.Signal
		fault   faultproxy.Fault
		code    int
		end     string
		sent    int
		errs    []string
	}{
		{"held before the server, SIGINT", "v1.4.3", os.Interrupt, faultproxy.Timeout,
			cmdutil.ExitInterrupted, nodeA, 0, []string{"Stopped before the confirm: confirm: interrupted", "Rollback verified:", "error: interrupted by SIGINT"}},
		{"held before the server, SIGTERM", "v1.6.0", syscall.SIGTERM, faultproxy.Timeout,
			cmdutil.ExitTerminated, nodeA, 0, []string{"Stopped before the confirm: confirm: interrupted", "Rollback verified:", "error: interrupted by SIGTERM"}},
		{"reached the server, answer held, SIGINT", "v1.4.3", os.Interrupt, faultproxy.TimeoutAfter,
			cmdutil.ExitAttention, nodeB, 1, []string{"the confirm landed although the request reported", "interrupted after the confirm"}},
		{"reached the server, answer held, SIGTERM", "v1.6.0", syscall.SIGTERM, faultproxy.TimeoutAfter,
			cmdutil.ExitAttention, nodeB, 1, []string{"the confirm landed although the request reported", "interrupted after the confirm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tt.version)
			p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
			vol := "vol-signal-confirm"
			res := writtenResource(tt.version)
			e.createAttached(lhsim.VolumeOptions{Migratable: true}, vol)
			// Hold readiness until the start has gone through, so the
			// fault below can only hit the confirm.
			held := e.Sim.Inject(lhsim.Fault{Kind: lhsim.MigrationEngineNeverReady, Volume: vol})
			ctx, cancel := context.WithCancelCause(e.Ctx)
			defer cancel(nil)
			resCh := make(chan clitest.Result, 1)
			go func() {
				resCh <- clitest.New(e.T, kc).Run(ctx, "migrate", vol, "--to", nodeB, "--confirm", "--yes", poll, "-n", e.NS)
			}()
			e.WaitFor("migration engine created", vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
				return len(es) == 2
			})
			e.Await("the start written", func() bool { return p.Count("patch", res, vol) == 1 })
			// Delay bounds the hold: the signal comes within milliseconds,
			// and a client that went away may not end the proxy's handler.
			p.Add(faultproxy.Rule{Verb: "patch", Resource: res, Name: vol, Fault: tt.fault, First: 1, Delay: 10 * time.Second})
			e.Sim.ClearFault(held)
			awaitHeld := func() error {
				ctx, cancel := context.WithTimeout(e.Ctx, waitTimeout)
				defer cancel()
				return p.AwaitFault(ctx, "patch", res, vol)
			}
			if err := awaitHeld(); err != nil {
				cancel(nil)
				t.Fatalf("the confirm was not held by the proxy: %v\n%s", err, <-resCh)
			}
			se := &cmdutil.SignalError{Signal: tt.sig}
			cancel(se) // what main does on the signal
			out := <-resCh
			expectCode(t, out, tt.code)
			expectContains(t, "stderr", out.Stderr, tt.errs...)
			if n := strings.Count(out.Stderr, "error: "); n != 1 {
				t.Errorf("%d error lines, want 1", n)
			}
			// The start, then the confirm if it reached the server, else
			// the rollback.
			if n := p.Count("patch", res, vol); n != 2 {
				t.Errorf("%d patches reached the server, want 2", n)
			}
			for _, r := range p.Requests() {
				if r.Fault != "" && r.Forwarded != (tt.sent == 1) {
					t.Errorf("the held confirm reached the server: %v, want %v", r.Forwarded, tt.sent == 1)
				}
			}
			e.WaitFor(fmt.Sprintf("testenv.Settled on %s", tt.end), vol, testenv.Settled(tt.end))
			e.ExpectNoDataLoss(vol)
		})
	}
}
