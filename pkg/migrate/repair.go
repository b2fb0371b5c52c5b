package migrate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// fixRepairs: fix is the way out of this finding: two active engines
// (fix explains a refusal itself), or any finding fix writes for; the
// others get the steps by hand.
func fixRepairs(f detect.Finding) bool {
	return f.Type == detect.TypeMultipleActiveEngines || f.Action.Writes()
}

// afterBadConfirm reports a volume that the confirm left in a state waiting
// does not resolve: two active engines (longhorn#6642, the seed's bug) or
// inverted replica flags. With --fix the first is handed to fix's pipeline.
func (s *session) afterBadConfirm(ctx context.Context, to string, f detect.Finding) error {
	s.step("Verification failed: %s.", f.Type)
	s.infof("%s", f.Reason)
	for _, e := range f.Evidence.Engines {
		role := e.Role
		if role == "" {
			role = "-"
		}
		s.infof("  engine %s on %s: active=%t state=%s role=%s", e.Name, orNone(e.NodeID), e.Active, orText(e.State, "-"), role)
	}
	if !fixRepairs(f) {
		if f.Family != nil {
			s.infof("To repair it by hand (%s):", f.Family.Doc)
			for _, st := range f.Family.Steps {
				s.infof("  %s", st)
			}
		}
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("volume %s is in state %s after the confirm; do not delete any replica; inspect it with: %s",
			s.vol, f.Type, s.commandLine("scan", s.vol, "-o", "wide")))
	}
	fixCmd := s.commandLine("fix", s.vol)
	what := "two active engines after the confirm (longhorn#6642)"
	if f.Type == detect.TypeEnginesOnOneNode {
		what = "two engines on " + to + " after the confirm, and Longhorn cannot finish it"
	}
	s.infof("Volume %s has %s: the engine to keep is %s on %s, stale: %s.", s.vol, what,
		orNone(f.Keep), to, orText(strings.Join(f.Stale, ", "), "none identified"))
	if !s.fix.Fix {
		s.infof("Repair it with:\n  %s", fixCmd)
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("volume %s has %s; repair it with: %s", s.vol, what, fixCmd))
	}
	return s.repair(ctx, to, f, fixCmd)
}

// repair hands a #6642 volume to fix's per-volume pipeline (plan from a
// fresh read, back up that read, write pinned to uid and resourceVersion,
// verify), exactly what `kubectl longhorn-engines fix VOLUME` would do, then
// verifies the migration on to itself.
func (s *session) repair(ctx context.Context, to string, f detect.Finding, fixCmd string) error {
	stop := func(format string, args ...any) error {
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf(format+"; repair it by hand with: %s", append(args, fixCmd)...))
	}
	r, err := fix.NewRepairer(fix.Settings{
		Client: s.c, Namespace: s.ns, Strategy: fix.StrategyAuto, DryRun: cmdutil.DryRunNone,
		Wait: true, Timeout: s.recoveryTimeout(), PollInterval: s.o.PollInterval,
		Printer:      &fix.Printer{Out: s.o.Out, ErrOut: s.o.ErrOut, Reporter: s.progress},
		FieldManager: s.o.FieldManager,
	}, fix.Backups{Dir: s.fix.BackupDir, Now: time.Now()})
	if err != nil {
		return stop("--fix: %v, nothing was changed", err)
	}
	defer r.Close()
	s.infof("--fix: repairing with fix's pipeline; the objects and the action log go to %s", r.Backup.Dir)
	p, err := r.Plan(ctx, s.vol)
	if err != nil {
		return stop("--fix: %v, nothing was changed", err)
	}
	if !p.Acts() {
		return stop("--fix: fix does not act on volume %s: %s", s.vol, p.Why)
	}
	out := r.RepairFresh(ctx, p)
	// the repair's Events, as fix records them (--events)
	rec := fix.StartEvents(ctx, s.c, s.ns, s.fix.Events, cmdutil.DryRunNone, func(m string) { s.infof("%s", m) })
	fix.RecordOutcome(rec, fix.VolumeRef(ctx, s.c, s.ns, s.vol, p.Snapshot.VolumeUID), p.Action, out)
	rec.Close(fix.EventFlushTimeout)
	if out.Result != fix.ResultRepaired {
		s.step("Not repaired by fix (%s): %s.", out.Result, out.Detail)
		return stop("--fix: volume %s was not repaired (%s)", s.vol, out.Result)
	}
	s.step("Repaired by fix: %s of %v; %s.", p.Action, out.Changed, out.Detail)
	snap, v, err := s.waitVerified(ctx, to)
	if err != nil {
		s.step("Not verified after the repair: %v.", err)
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("volume %s was repaired but is not verified on %s: %w; check with: %s",
			s.vol, to, err, s.commandLine("migrate", "status", s.vol)))
	}
	s.step("Verified: %s.", v.summary(snap, to))
	s.outf("volume.longhorn.io %q migrated to %s", s.vol, to)
	return nil
}
