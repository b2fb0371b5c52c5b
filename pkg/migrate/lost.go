package migrate

import (
	"context"
	"errors"
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// afterWaitFailed decides what `migrate` does when the wait for readiness
// ends without a ready engine. Before the confirm the rule is to roll back,
// except toward a node that is down: Longhorn would wait for it to return
// (longhorn-tests: "Migration Rollback After Original Node Down" stays
// attaching, "Migration Confirmation After Original Node Down" recovers on
// the target), so a lost source is confirmed toward the target instead.
func (s *session) afterWaitFailed(ctx context.Context, from, to string, err error) error {
	if handled, herr := s.waitEnded(ctx, from, to, err, from, "Stopped before the confirm"); handled {
		return herr
	}
	var down *nodeDownError
	if !errors.As(err, &down) && !errors.Is(err, errInterrupted) {
		if up, why := s.nodeUp(context.WithoutCancel(ctx), from); !up {
			s.step("Stopped before the confirm: %v; the source node %s is down (%s).", err, from, why)
			return s.confirmSourceLost(ctx, from, to)
		}
	}
	return s.rollBack(ctx, from, to, err)
}

// waitEnded handles the ends of a readiness wait that are not a failure of
// the migration: confirmed by someone else, detached by Longhorn (resumed on
// prefer when it is up), the source node lost (confirmed toward the target).
// handled is false for any other error, which the caller decides on.
func (s *session) waitEnded(ctx context.Context, from, to string, err error, prefer, stopped string) (handled bool, _ error) {
	var down *nodeDownError
	var cd *crashDetachedError
	var wn *withoutNodeError
	switch {
	case errors.As(err, &wn):
		s.step("%s: %v.", stopped, err)
		return true, s.afterWithoutNode(ctx, wn, prefer)
	case errors.Is(err, errConfirmedElsewhere):
		s.step("Confirmed outside this command while waiting for readiness.")
		return true, s.verifyConfirm(ctx, to)
	case errors.As(err, &cd):
		s.step("%s: %v.", stopped, err)
		return true, s.resumeAfterCrash(ctx, from, to, cd.nodes, prefer)
	case errors.As(err, &down) && down.role == "source":
		s.step("%s: %v.", stopped, err)
		return true, s.confirmSourceLost(ctx, from, to)
	}
	return false, nil
}

// resumeAfterCrash ends a run that found the volume detached by Longhorn
// mid-migration: it resumes it on prefer (the source for `migrate`, the
// target for `migrate confirm`) unless that node is down, then on the other.
func (s *session) resumeAfterCrash(ctx context.Context, from, to string, nodes []string, prefer string) error {
	ctx = context.WithoutCancel(ctx)
	states, err := s.nodeStates(ctx, nodes)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("volume %s was detached by Longhorn after the migration failed and its nodes could not be read (%v); see: %s", s.vol, err, s.commandLine("migrate", "status", s.vol)))
	}
	keep := prefer
	if states[keep] != "Ready" {
		for _, n := range nodes {
			if n != keep && states[n] == "Ready" {
				keep = n
			}
		}
	}
	if states[keep] != "Ready" {
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("volume %s was detached by Longhorn after the migration failed and no node of it is Ready (%v): Longhorn waits; when one is back run: %s",
			s.vol, states, s.commandLine("migrate", "status", s.vol)))
	}
	drop := ""
	for _, n := range nodes {
		if n != keep {
			drop = n
		}
	}
	err = s.resumeOn(ctx, s.crashBuild(nodes, drop, "resume"), keep, drop, "resume")
	if err != nil || keep == to {
		return err
	}
	s.report()
	return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("volume %s was not migrated to %s: Longhorn detached it after the migration failed; it was attached again and verified on %s", s.vol, to, keep))
}

// confirmSourceLost confirms toward the target a migration whose source
// engine is not running on a node that is down: the only way the volume
// comes back without that node (Longhorn detaches it and attaches it on the
// target). Refused when the target is not Ready too.
func (s *session) confirmSourceLost(ctx context.Context, from, to string) error {
	ctx = context.WithoutCancel(ctx)
	s.infof("The source node %s is down: rolling back would wait for it. Confirming toward %s instead (up to %s):", from, to, s.recoveryTimeout())
	rctx, cancel := context.WithTimeout(ctx, s.recoveryTimeout())
	defer cancel()
	_, err := s.send(rctx, func(sn *snapshot) (write, error) {
		if nodes := sn.crashDetached(); nodes != nil {
			return write{}, &crashDetachedError{nodes: nodes}
		}
		if up, why := s.nodeUp(rctx, to); !up {
			return write{}, fmt.Errorf("the target node %s is not Ready either (%s)", to, why)
		}
		if up, _ := s.nodeUp(rctx, from); up {
			return write{}, fmt.Errorf("the source node %s is Ready again", from)
		}
		if s.drv.confirmed(sn, to) {
			return write{}, errConfirmedElsewhere
		}
		if why := engineToSwitchTo(sn, to); why != "" {
			return write{}, &noEngineError{why: why}
		}
		return s.drv.confirm(sn, to)
	})
	var cd *crashDetachedError
	var ne *noEngineError
	switch {
	case err == nil, errors.Is(err, errConfirmedElsewhere):
	case errors.As(err, &cd):
		return s.resumeAfterCrash(ctx, from, to, cd.nodes, to)
	case errors.As(err, &ne):
		s.step("Not confirmed: %v.", err)
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("the source node %s is down and %s: Longhorn %s would never finish a confirm toward %s now, so nothing was written; when %s is Ready again, run: %s",
			from, ne.why, s.ver, to, from, s.commandLine("migrate", "confirm", s.vol)))
	default:
		if ok, _ := s.landed(rctx, func(sn *snapshot) bool { return s.drv.confirmed(sn, to) }); !ok {
			s.step("Not confirmed: %v.", err)
			s.report()
			return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("the source node %s is down and the confirm toward %s could not be written (%v); nothing was rolled back toward the node that is down; see: %s",
				from, to, err, s.commandLine("migrate", "status", s.vol)))
		}
	}
	s.step("Confirmed toward %s: the source node %s is down.", to, from)
	return s.verifyConfirm(rctx, to)
}

// noEngineError: a confirm Longhorn could not finish (engineToSwitchTo).
type noEngineError struct{ why string }

func (e *noEngineError) Error() string { return e.why }
