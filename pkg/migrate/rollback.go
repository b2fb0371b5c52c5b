package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// runRollback is `migrate rollback VOLUME`: abandon a migration in flight and
// verify the volume back on the node it is attached to. Exit 0 means rolled
// back and verified, as asked.
func (s *session) runRollback(ctx context.Context) error {
	snap, done, err := s.readInFlight(ctx, true)
	if done {
		return err
	}
	cs, to := inFlightChecks(snap, s.drv)
	toFlagCheck(&cs, s.o.To, to)
	if from := snap.volume.Spec.NodeID; from != "" {
		// Longhorn would wait for a node that is down (longhorn-tests:
		// "Migration Rollback After Original Node Down").
		up, why := s.nodeUp(ctx, from)
		cs.add("source node Ready", up, "node %s: %s", from, why)
	}
	if from := snap.volume.Spec.NodeID; selfConfirming(s.ver, snap, from, to) {
		cs.add("csi-attacher ticket on the source", false,
			"none on %s: the workload has left it and Longhorn confirms the migration to %s by itself; a rollback would remove the last ticket and detach the volume from the workload", from, to)
	}
	cs = append(cs, s.workloadCheck(ctx, snap))
	if len(cs.failed()) > 0 {
		for _, c := range cs.failed() {
			if c.Name == "source node Ready" && to != "" {
				s.infof("The source node is down: Longhorn would keep the volume attaching until it returns. Confirm toward %s instead: %s", to, s.commandLine("migrate", "confirm", s.vol))
			}
		}
		return s.refuse("roll back the migration of volume "+s.vol, cs)
	}
	from := snap.volume.Spec.NodeID
	if s.o.dryRun != cmdutil.DryRunNone {
		return s.dryRunStep(ctx, snap, "Roll back:", "rollback", func(sn *snapshot) (write, error) { return s.drv.rollback(sn, to) })
	}
	if err := s.prompt(ctx, fmt.Sprintf("Roll back the migration of volume %s to %s? It stays on %s; the migration engine is removed.", s.vol, to, from)); err != nil {
		return err
	}
	err = s.rollbackAndVerify(ctx, from, to)
	if err != nil {
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, err)
	}
	s.outf("volume.longhorn.io %q rolled back to %s", s.vol, from)
	return nil
}

// readInFlight reads the volume for confirm and rollback. A migration that
// lost an end (its volume crash-detached, or without its node) has a
// repair of its own: readInFlight runs it and returns its result with done
// set; rollback says which of the two asked.
func (s *session) readInFlight(ctx context.Context, rollback bool) (snap *snapshot, done bool, err error) {
	snap, err = s.read(ctx)
	if err != nil {
		return nil, true, noCheck(err)
	}
	if nodes := snap.crashDetached(); nodes != nil {
		return nil, true, s.runCrashDetached(ctx, snap, nodes, rollback)
	}
	if src, tgt := snap.withoutNode(); src != "" {
		return nil, true, s.runWithoutNode(ctx, snap, src, tgt, rollback)
	}
	return snap, false, nil
}

// rollBack abandons a migration this run started, after cause (a timeout, a
// failed step, an interrupt), with a context of its own: the one that was
// cancelled must not cut the rollback short. Every step taken is reported.
// The volume is safe on from when this returns cmdutil.ExitNeedsAction.
func (s *session) rollBack(ctx context.Context, from, to string, cause error) error {
	s.step("Stopped before the confirm: %v.", cause)
	s.infof("Rolling back the migration of %s to %s (up to %s):", s.vol, to, s.recoveryTimeout())
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.recoveryTimeout())
	defer cancel()
	if err := s.rollbackAndVerify(rctx, from, to); err != nil {
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("%w; the migration was stopped because: %v", err, cause))
	}
	s.outf("volume.longhorn.io %q rolled back to %s", s.vol, from)
	s.report()
	return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("volume %s was not migrated to %s (%v); it was rolled back and verified on %s", s.vol, to, cause, from))
}

// rollbackAndVerify writes the rollback (unless Longhorn already dropped the
// migration) and verifies the volume on from.
func (s *session) rollbackAndVerify(ctx context.Context, from, to string) error {
	_, err := s.send(ctx, func(sn *snapshot) (write, error) {
		if !s.drv.pending(sn, to) {
			return write{}, errNothingToRollBack
		}
		return s.drv.rollback(sn, to)
	})
	if err != nil && !errors.Is(err, errNothingToRollBack) {
		// A lost answer can hide a rollback that landed: look before
		// calling it failed.
		if ok, _ := s.landed(ctx, func(sn *snapshot) bool { return !s.drv.pending(sn, to) }); ok {
			s.infof("  the rollback landed although the request reported: %v", err)
			err = nil
		}
	}
	switch {
	case errors.Is(err, errNothingToRollBack):
		s.step("Rollback: nothing to write, the migration to %s is no longer requested.", to)
	case err != nil:
		s.step("Rollback failed: %v.", err)
		return fmt.Errorf("the rollback could not be written (%v): the migration to %s may still be in place; retry with: %s",
			err, to, s.commandLine("migrate", "rollback", s.vol))
	default:
		s.step("Rolled back: the migration of %s to %s was withdrawn.", s.vol, to)
	}
	snap, v, err := s.waitVerified(ctx, from)
	var bad *badStateError
	switch {
	case err == nil:
		s.step("Rollback verified: %s.", v.summary(snap, from))
		return nil
	case errors.As(err, &bad):
		s.step("Rollback not verified: %v.", err)
		return fmt.Errorf("after the rollback volume %s is in state %s; inspect it with: %s",
			s.vol, bad.finding.Type, s.commandLine("scan", s.vol, "-o", "wide"))
	}
	s.step("Rollback not verified: %v.", err)
	return fmt.Errorf("the rollback of volume %s is not verified on %s: %w", s.vol, from, err)
}
