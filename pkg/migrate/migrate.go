package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// runMigrate is `migrate VOLUME --to NODE`: pre-check, start, wait until the
// migration engine is ready, then (with --confirm) confirm and verify. Any
// failure or interrupt before the confirm rolls back and verifies the
// rollback.
func (s *session) runMigrate(ctx context.Context, confirm bool) error {
	to := s.o.To
	snap, err := s.read(ctx)
	if err != nil {
		return noCheck(err)
	}
	node, err := s.readNode(ctx, to)
	if err != nil {
		return noCheck(err)
	}
	cs := startChecks(snap, node, to)
	cs = append(cs, s.releaseCheck(snap), s.workloadCheck(ctx, snap))
	if len(cs.failed()) > 0 {
		return s.refuse(fmt.Sprintf("migrate volume %s to %s", s.vol, to), cs)
	}
	from := snap.volume.Spec.NodeID
	s.infof("Pre-checks passed (%d): volume %s is attached to %s, Longhorn %s; the migration goes through %s.",
		len(cs), s.vol, from, s.ver, s.drv.mechanism())

	if s.o.dryRun != cmdutil.DryRunNone {
		if err := s.dryRunStep(ctx, snap, "Start:", "start", func(sn *snapshot) (write, error) { return s.drv.start(sn, to) }); err != nil {
			return err
		}
		s.infof("Then: wait up to %s for the migration engine on %s, roll back if it is not ready%s.",
			s.o.Timeout, to, map[bool]string{true: ", confirm and verify", false: ""}[confirm])
		return nil
	}
	q := fmt.Sprintf("Migrate volume %s from %s to %s? It keeps serving I/O from %s until the migration is confirmed.", s.vol, from, to, from)
	if confirm {
		q = fmt.Sprintf("Migrate volume %s from %s to %s and confirm once the migration engine is ready?", s.vol, from, to)
	}
	if err := s.prompt(ctx, q); err != nil {
		return err
	}

	s.infof("Starting the migration of %s to %s:", s.vol, to)
	_, err = s.send(ctx, func(sn *snapshot) (write, error) {
		if failed := append(startChecks(sn, node, to), s.releaseCheck(sn), s.workloadCheck(ctx, sn)).failed(); len(failed) > 0 {
			return write{}, &refusal{what: "start the migration (state changed since the pre-checks)", failed: failed}
		}
		return s.drv.start(sn, to)
	})
	if err != nil {
		if err := s.startFailed(ctx, from, to, err); err != nil {
			return err
		}
	}
	s.step("Started: migration of %s from %s to %s requested through %s.", s.vol, from, to, s.drv.mechanism())

	if _, err := s.waitReady(ctx, to); err != nil {
		return s.afterWaitFailed(ctx, from, to, err)
	}
	s.step("Ready: the migration engine on %s is running with all replicas and snapshots in sync.", to)
	if !confirm {
		s.outf("volume.longhorn.io %q ready to migrate to %s", s.vol, to)
		s.infof("The volume still serves I/O from %s. Next:\n  confirm:   %s\n  roll back: %s",
			from, s.commandLine("migrate", "confirm", s.vol), s.commandLine("migrate", "rollback", s.vol))
		return nil
	}
	return s.confirmAndVerify(ctx, from, to, true)
}

// workloadCheck is the "not in use by a workload" pre-check; --force turns
// a failure into a warning.
func (s *session) workloadCheck(ctx context.Context, snap *snapshot) check {
	return s.forced(workloadUse(ctx, s.c.Dynamic, snap).check())
}

// releaseCheck is provenCheck; --force turns a failure into a warning.
func (s *session) releaseCheck(snap *snapshot) check {
	return s.forced(provenCheck(snap.version))
}

// forced turns a failed check into a warning (once) under --force.
func (s *session) forced(c check) check {
	if !c.OK && s.o.Force {
		if !s.forceWarned[c.Name] {
			s.infof("warning: --force: %s", c.Detail)
			if s.forceWarned == nil {
				s.forceWarned = map[string]bool{}
			}
			s.forceWarned[c.Name] = true
		}
		c.OK = true
		c.Detail = "--force: " + c.Detail
	}
	return c
}

// startFailed handles a start write that did not go through, or whose
// answer was lost: it reads the volume back. Not in place: nothing changed.
// In place although the request failed: the run goes on (nil), unless it
// was interrupted, then it rolls back. The write is never sent again.
func (s *session) startFailed(ctx context.Context, from, to string, cause error) error {
	var ref *refusal
	if errors.As(cause, &ref) {
		// Decided against on a fresh read: nothing was sent, and a
		// migration seen now is not this run's.
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("start failed, nothing was changed: %w", cause))
	}
	interrupted := errors.Is(cause, errInterrupted) || ctx.Err() != nil
	if interrupted {
		cause = errInterrupted
	}
	pending, err := s.landed(ctx, func(sn *snapshot) bool { return s.drv.pending(sn, to) })
	switch {
	case err != nil:
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("the start request failed (%v) and the volume could not be read back (%v): the migration to %s may be in place; check with: %s",
			cause, err, to, s.commandLine("migrate", "status", s.vol)))
	case !pending:
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("start failed, nothing was changed: %w", cause))
	case interrupted:
		return s.rollBack(ctx, from, to, describeErr("start", cause))
	}
	s.infof("  the start landed although the request reported: %v", cause)
	return nil
}
