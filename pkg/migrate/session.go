package migrate

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// session is one run of a migrate subcommand: the client, the Longhorn
// version read once, the driver it selects, and the steps taken so far.
type session struct {
	o     *StepOptions
	fix   FixOptions
	c     *readstate.Client
	ns    string
	vol   string
	ver   longhorn.Version
	drv   driver
	steps []string
	t0    time.Time
	// forceWarned: each check's --force warning is printed once per run.
	forceWarned map[string]bool
	// progress shows the waits on stderr: live on a terminal, plain lines
	// otherwise; every other line clears it first.
	progress *progress.Reporter
}

// newSession reads the Longhorn version; a subcommand that writes
// (writes set) needs to know it, status shows what it can without.
func newSession(ctx context.Context, o *StepOptions, fix FixOptions, writes bool) (*session, error) {
	s := &session{o: o, fix: fix, c: o.client, ns: o.namespace, vol: o.Volume, t0: time.Now(),
		progress: progress.New(o.ErrOut, cmdutil.NewPainter(cmdutil.UseColor("auto", o.ErrOut)))}
	v, src, err := readstate.ReadVersion(ctx, s.c, s.ns)
	if err != nil {
		return nil, cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	if !v.Known() && writes {
		return nil, cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("cannot tell the Longhorn version in namespace %q (%s): the migration mechanism depends on it; is -n right?", s.ns, src))
	}
	s.ver, s.drv = v, driverFor(v)
	return s, nil
}

// read takes a fresh snapshot of the volume.
func (s *session) read(ctx context.Context) (*snapshot, error) {
	return readSnapshot(ctx, s.c, s.ns, s.vol, s.ver)
}

// readNode reads a Longhorn node; nil when it does not exist.
func (s *session) readNode(ctx context.Context, name string) (*longhorn.Node, error) {
	return getNode(ctx, s.c, s.ns, name)
}

// getNode reads a Longhorn node; nil when it does not exist.
func getNode(ctx context.Context, c *readstate.Client, ns, name string) (*longhorn.Node, error) {
	n, err := readstate.Get[longhorn.Node](ctx, c, longhorn.Nodes, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, cmdutil.Explain(err, "get", longhorn.Nodes.GroupResource(), ns)
	}
	return n, nil
}

// noCheck turns a read failure into exit code 2.
func noCheck(err error) error {
	return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
}

// infof prints progress to stderr.
func (s *session) infof(format string, args ...any) {
	s.progress.Clear()
	fmt.Fprintf(s.o.ErrOut, format+"\n", args...)
}

// outf prints a result line to stdout.
func (s *session) outf(format string, args ...any) {
	fmt.Fprintf(s.o.Out, format+"\n", args...)
}

// step records a step taken (for the closing report) and prints it.
func (s *session) step(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.steps = append(s.steps, msg)
	s.infof("%s", msg)
}

// report prints every step taken, for the closing lines of a run that did
// not end as asked.
func (s *session) report() {
	if len(s.steps) == 0 {
		return
	}
	s.infof("Steps taken:")
	for i, st := range s.steps {
		s.infof("  %d. %s", i+1, st)
	}
}

// printChecks lists pre-checks, failed ones marked.
func (s *session) printChecks(cs checks) {
	for _, c := range cs {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		s.infof("  %s %s: %s", mark, c.Name, c.Detail)
	}
}

// refuse reports failed pre-checks: nothing was written.
func (s *session) refuse(what string, cs checks) error {
	s.infof("Pre-checks for volume %s (Longhorn %s):", s.vol, s.ver)
	s.printChecks(cs)
	for _, c := range cs.failed() {
		if c.Name == "not already migrating" {
			s.infof("A migration is in flight: see it with '%s', finish it with '%s' or '%s'.",
				s.commandLine("migrate", "status", s.vol), s.commandLine("migrate", "confirm", s.vol), s.commandLine("migrate", "rollback", s.vol))
		}
	}
	return cmdutil.WithCode(cmdutil.ExitNeedsAction, &refusal{what: what, failed: cs.failed()})
}

// commandLine renders a follow-up command the operator can paste.
func (s *session) commandLine(args ...string) string {
	parts := append([]string{"kubectl", "longhorn-engines"}, args...)
	if s.ns != longhorn.DefaultNamespace {
		parts = append(parts, "-n", s.ns)
	}
	return strings.Join(parts, " ")
}

// prompt asks y/N unless --yes and returns nil on yes; a no, stdin that
// is not a terminal, or a signal at the prompt stop the command with
// nothing changed.
func (s *session) prompt(ctx context.Context, question string) error {
	if s.o.Yes {
		return nil
	}
	p := cmdutil.Prompt{In: s.o.In, ErrOut: s.o.ErrOut, Terminal: s.o.Terminal, Target: cmdutil.Target(s.o.ConfigFlags)}
	return p.Confirm(ctx, question, cmdutil.ExitNeedsAction, "nothing was changed", "nothing was changed; re-run with --yes (or --dry-run=server to test the write)")
}

// recoveryTimeout is the budget of a rollback after a failure and of the
// verification after a confirm.
func (s *session) recoveryTimeout() time.Duration {
	return max(s.o.Timeout, minRecoveryTimeout)
}
