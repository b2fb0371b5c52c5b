package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// errNotReady refuses a confirm whose readiness no longer holds on the fresh
// read right before the write.
type errNotReady struct{ r readiness }

func (e *errNotReady) Error() string { return "the migration is not ready to confirm: " + e.r.String() }

// runConfirm is `migrate confirm VOLUME`: finish a migration that is in
// flight, started by this tool or by Longhorn's own attachers. It waits for
// readiness up to --timeout; if that does not come, it changes nothing (it
// did not start the migration, so it does not roll it back).
func (s *session) runConfirm(ctx context.Context) error {
	snap, done, err := s.readInFlight(ctx, false)
	if done {
		return err
	}
	cs, to := inFlightChecks(snap, s.drv)
	cs = append(cs, s.releaseCheck(snap))
	toFlagCheck(&cs, s.o.To, to)
	if to != "" {
		node, err := s.readNode(ctx, to)
		if err != nil {
			return noCheck(err)
		}
		nodeReadyCheck(&cs, node, to)
	}
	cs = append(cs, s.workloadCheck(ctx, snap))
	if len(cs.failed()) > 0 {
		return s.refuse("confirm the migration of volume "+s.vol, cs)
	}
	from := snap.volume.Spec.NodeID
	if s.o.dryRun != cmdutil.DryRunNone {
		r := checkReady(snap, s.drv, to)
		if r.ready {
			s.infof("The migration of %s to %s is ready to confirm.", s.vol, to)
		} else {
			s.infof("Not ready yet, the confirm would first wait up to %s for: %s", s.o.Timeout, r)
		}
		return s.dryRunStep(ctx, snap, "Confirm:", "confirm", func(sn *snapshot) (write, error) { return s.drv.confirm(sn, to) })
	}
	if err := s.prompt(ctx, fmt.Sprintf("Confirm the migration of volume %s from %s to %s? The engine on %s will be removed.", s.vol, from, to, from)); err != nil {
		return err
	}
	if _, err := s.waitReady(ctx, to); err != nil {
		if handled, herr := s.waitEnded(ctx, from, to, err, to, "Stopped waiting"); handled {
			return herr
		}
		s.step("Not confirmed: %v.", err)
		if up, _ := s.nodeUp(context.WithoutCancel(ctx), from); !up {
			return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("nothing was changed: %w; the source node %s is down, so do not roll back: run this command again", err, from))
		}
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("nothing was changed: %w; to abandon the migration run: %s", err, s.commandLine("migrate", "rollback", s.vol)))
	}
	s.step("Ready: the migration engine on %s is running with all replicas and snapshots in sync.", to)
	return s.confirmAndVerify(ctx, from, to, false)
}

// nodeReadyCheck: confirming onto a node that is down makes 1.7+ detach the
// volume entirely, and serves I/O from nowhere on any version.
func nodeReadyCheck(cs *checks, node *longhorn.Node, to string) {
	if node == nil {
		cs.add("target node Ready", false, "node %s does not exist in Longhorn", to)
		return
	}
	cs.add("target node Ready", node.Ready(), "node %s", to)
}

// confirmAndVerify writes the confirm (after checking readiness once more on
// a fresh read) and verifies the volume on to. rollbackOnFailure: a confirm
// that could not be written rolls back (the whole sequence started it).
func (s *session) confirmAndVerify(ctx context.Context, from, to string, rollbackOnFailure bool) error {
	s.infof("Confirming the migration of %s to %s:", s.vol, to)
	_, err := s.send(ctx, func(sn *snapshot) (write, error) {
		if r := checkReady(sn, s.drv, to); !r.ready {
			return write{}, &errNotReady{r}
		}
		node, err := s.readNode(ctx, to)
		if err != nil {
			return write{}, err
		}
		if node == nil || !node.Ready() {
			return write{}, fmt.Errorf("node %s is no longer Ready", to)
		}
		return s.drv.confirm(sn, to)
	})
	if err != nil {
		// A lost response can hide a confirm that landed: look before
		// deciding it failed.
		if ok, _ := s.landed(ctx, func(sn *snapshot) bool { return s.drv.confirmed(sn, to) }); ok {
			s.infof("  the confirm landed although the request reported: %v", err)
		} else {
			if ctx.Err() != nil {
				err = errInterrupted
			}
			if rollbackOnFailure {
				return s.rollBack(ctx, from, to, describeErr("confirm", err))
			}
			s.step("Not confirmed: %v.", err)
			return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("confirm failed, nothing was changed: %w", err))
		}
	}
	s.step("Confirmed: the migration of %s to %s (removes the engine on %s).", s.vol, to, from)
	return s.verifyConfirm(ctx, to)
}

// verifyConfirm waits until the volume is verified on to. Two active engines
// (longhorn#6642) are reported with the exact fix command, or repaired with
// --fix.
func (s *session) verifyConfirm(ctx context.Context, to string) error {
	snap, v, err := s.waitVerified(ctx, to)
	var bad *badStateError
	switch {
	case err == nil:
		s.step("Verified: %s.", v.summary(snap, to))
		s.outf("volume.longhorn.io %q migrated to %s", s.vol, to)
		return nil
	case errors.As(err, &bad):
		return s.afterBadConfirm(ctx, to, bad.finding)
	case errors.Is(err, errInterrupted):
		s.step("Interrupted while verifying: the confirm was already sent and cannot be undone.")
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("interrupted after the confirm; check the volume with: %s", s.commandLine("migrate", "status", s.vol)))
	}
	s.step("Not verified: %v.", err)
	s.report()
	return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("the confirm was sent but volume %s is not verified on %s: %w; check with: %s",
		s.vol, to, err, s.commandLine("migrate", "status", s.vol)))
}

// toFlagCheck: --to on confirm or rollback names the migration's target; it
// must match the migration in flight.
func toFlagCheck(cs *checks, flag, to string) {
	if flag != "" {
		cs.add("--to is the migration's target", flag == to, "--to %s, migration target %s", flag, orNone(to))
	}
}
