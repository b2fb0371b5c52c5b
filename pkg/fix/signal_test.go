package fix_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// A signal at every step of fix: it stops at the next safe point, says what
// was and was not done, keeps the backups and the action log, and exits 130
// (SIGINT) or 143 (SIGTERM). The signal is delivered the way main delivers
// it, as the cause of the cancelled context, at a precise point through
// the test hooks.

// stdinThatSignals is a prompt's stdin: the first read delivers the signal,
// then blocks as a user who never answers.
type stdinThatSignals struct {
	deliver func()
	block   chan struct{}
}

func (s *stdinThatSignals) Read([]byte) (int, error) {
	s.deliver()
	<-s.block
	return 0, io.EOF
}

// onEngine runs d at a write hook of an engine: the replica writes that
// come first are inert while two engines are active.
func onEngine(d func()) func(string) {
	return func(name string) {
		if strings.Contains(name, "-e-") {
			d()
		}
	}
}

func TestFixSignalAtEveryStep(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		want := (&cmdutil.SignalError{Signal: sig}).Code()
		name := cmdutil.SignalName(sig)
		for _, step := range []struct {
			name string
			// at arranges the delivery; wait adds --wait.
			at   func(deliver func(), h *fix.Hooks)
			wait bool
			// written: engines of vol-a / vol-b changed afterwards.
			writtenA, writtenB bool
			backup             bool
			out                []string
		}{
			{name: "before the plan", at: func(d func(), _ *fix.Hooks) { d() }, out: []string{"interrupted by " + name}},
			{name: "at the prompt", at: func(func(), *fix.Hooks) {}, out: []string{"stopped at the prompt: nothing was changed"}},
			{name: "after the plan", at: func(d func(), h *fix.Hooks) { h.AfterPlan = d }, out: []string{"stopped before any change"}},
			{name: "between backup and write", at: func(d func(), h *fix.Hooks) {
				h.BeforeWrite = onEngine(d)
			}, backup: true, out: []string{"stopped before writing engine", "backup kept in"}},
			{name: "between two volumes", at: func(d func(), h *fix.Hooks) {
				h.AfterWrite = onEngine(d)
			}, writtenA: true, backup: true, out: []string{`volume.longhorn.io "vol-b" not-attempted`, "stopped before this volume"}},
			{name: "during the wait", wait: true, at: func(d func(), h *fix.Hooks) {
				h.AfterWrite = onEngine(d)
			}, writtenA: true, backup: true, out: []string{"interrupted before verification (the change stays)"}},
		} {
			t.Run(name+"/"+step.name, func(t *testing.T) {
				ctx := reset(t)
				create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol-a").Add(stripVersion(testenv.TwoActiveEngines(testenv.L14a, "vol-b"))))
				before := versions(t, ctx)
				runCtx, cancel := context.WithCancelCause(ctx)
				defer cancel(nil)
				deliver := func() { cancel(&cmdutil.SignalError{Signal: sig}) }
				in := &stdinThatSignals{deliver: deliver, block: make(chan struct{})}
				defer close(in.block)
				args := []string{"vol-a", "vol-b", "--parallel", "1", "--backup-dir", filepath.Join(t.TempDir(), "backup")}
				dir := args[len(args)-1]
				var h fix.Hooks
				if step.name == "at the prompt" {
					h.Terminal = func(io.Reader) bool { return true }
				} else {
					args = append(args, "--yes")
				}
				if !step.wait {
					args = append(args, "--wait=false")
				}
				step.at(deliver, &h)
				res := cli(t, cluster.KubeconfigPath(), h).Input(in).Run(runCtx, fixArgs(args...)...)
				if res.Code != want {
					t.Errorf("exit %d, want %d", res.Code, want)
				}
				if n := strings.Count(res.Stderr, "error: "); n != 1 || !strings.Contains(res.Stderr, "error: interrupted by "+name) {
					t.Errorf("want one error line saying the run was interrupted by %s", name)
				}
				testenv.Contains(t, "output", res.Stdout+res.Stderr, step.out...)
				after := versions(t, ctx)
				for k, v := range before {
					changed := after[k] != v
					wantChanged := false
					// The replica flags are written before the engine.
					switch {
					case strings.HasPrefix(k, "replicas/vol-a-"):
						wantChanged = step.backup
					case strings.HasPrefix(k, "replicas/vol-b-"):
						wantChanged = step.writtenB
					}
					if strings.HasPrefix(k, "engines/") {
						switch {
						case strings.Contains(k, testenv.EngineName(testenv.L14a, "vol-a", 0)):
							wantChanged = step.writtenA
						case strings.Contains(k, testenv.EngineName(testenv.L14a, "vol-b", 0)):
							wantChanged = step.writtenB
						}
					}
					if changed != wantChanged {
						t.Errorf("%s changed=%t, want %t", k, changed, wantChanged)
					}
				}
				if !step.backup {
					if _, err := os.Stat(filepath.Join(dir, "vol-a.yaml")); err == nil {
						t.Error("a backup was written, though the run stopped before the re-check")
					}
					return
				}
				backup := readFile(t, filepath.Join(dir, "vol-a.yaml"))
				testenv.Contains(t, "backup", backup, testenv.EngineName(testenv.L14a, "vol-a", 0), "active: true")
				log := readFile(t, filepath.Join(dir, fix.ActionLogName))
				if !strings.HasSuffix(log, "\n") || !strings.Contains(log, "backup volume=vol-a") {
					t.Errorf("action log incomplete:\n%s", log)
				}
				if step.writtenA && !strings.Contains(log, "deactivate engine="+testenv.EngineName(testenv.L14a, "vol-a", 0)+" ok") {
					t.Errorf("the write is not in the action log:\n%s", log)
				}
			})
		}
	}
}

// A real signal to the real binary, while it waits on a read that does not
// answer: it exits 130 or 143 with one error line and writes nothing.
func TestFixBinaryRealSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol-a"))
	before := versions(t, ctx)
	bin := filepath.Join(t.TempDir(), "kubectl-longhorn_engines")
	if err := testenv.BuildPlugin(ctx, bin); err != nil {
		t.Fatal(err)
	}
	p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
	p.Add(faultproxy.Rule{Verb: "list", Resource: longhorn.Engines.Plural, Fault: faultproxy.Timeout, Delay: 2 * time.Minute})
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p.ResetLog()
			dir := filepath.Join(t.TempDir(), "backup")
			var stdout, stderr strings.Builder
			cmd := exec.CommandContext(ctx, bin, "fix", "vol-a", "--yes", "--backup-dir", dir, "--kubeconfig", kc)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(time.Minute)
			// The reads of one volume run at once: wait for the faulted one
			// among them, not for it to be the last.
			for !anyFaulted(p.Requests()) {
				if time.Now().After(deadline) {
					t.Fatal("the binary never reached the read")
				}
				time.Sleep(20 * time.Millisecond) // polling the proxy's log, not synchronising on time
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			want := 130
			if sig == syscall.SIGTERM {
				want = 143
			}
			if code := cmd.ProcessState.ExitCode(); code != want {
				t.Errorf("exit %d, want %d\nstderr:\n%s", code, want, stderr.String())
			}
			if strings.Count(stderr.String(), "error: ") != 1 || !strings.Contains(stderr.String(), "error: interrupted by "+cmdutil.SignalName(sig)) {
				t.Errorf("stderr:\n%s", stderr.String())
			}
			noFile(t, dir)
			testenv.AssertUnchanged(t, before, versions(t, ctx))
		})
	}
}

func anyFaulted(rs []faultproxy.Request) bool {
	for _, r := range rs {
		if r.Fault != "" {
			return true
		}
	}
	return false
}
