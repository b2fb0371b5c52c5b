package migrate

import (
	"context"
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// withoutNode returns the source and target of a migration Longhorn 1.5 or
// 1.6 left without a node (the volume detached, spec.migrationNodeID still
// set, a csi-attacher ticket on each end; longhorn#8735); empty otherwise.
func (s *snapshot) withoutNode() (source, target string) {
	return detect.WithoutNodeEnds(s.version, &s.volume, s.va)
}

// withoutNodeError ends a wait that found the volume in that state.
type withoutNodeError struct {
	version        longhorn.Version
	source, target string
}

func (e *withoutNodeError) Error() string {
	return fmt.Sprintf("Longhorn %s detached the volume with its migration from %s to %s still requested (longhorn#8735) and will not attach it again by itself; removing the csi-attacher ticket of %s resumes it on %s",
		e.version, e.source, e.target, e.target, e.source)
}

// runWithoutNode is `migrate confirm` or `migrate rollback` of a volume in
// that state. The only way out offered is the one Longhorn's own 1.5.3
// controller was seen to take: remove the target's ticket, and the volume
// is attached again on the source. So confirm refuses and points at
// rollback, which makes that write, pinned and decided again on a fresh
// read, and verifies the volume on the source. rollback says which of the
// two asked.
func (s *session) runWithoutNode(ctx context.Context, snap *snapshot, source, target string, rollback bool) error {
	wn := &withoutNodeError{version: snap.version, source: source, target: target}
	if !rollback {
		s.infof("Volume %s: %v.", s.vol, wn)
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("refusing to confirm the migration of volume %s: Longhorn dropped it when it detached the volume; nothing was changed; resume the volume on %s with: %s",
			s.vol, source, s.commandLine("migrate", "rollback", s.vol)))
	}
	states, err := s.nodeStates(ctx, []string{source, target})
	if err != nil {
		return noCheck(err)
	}
	cs := checks{}
	cs.add("migration left without a node (longhorn#8735)", true, "spec.migrationNodeID=%q spec.nodeID=\"\", csi-attacher tickets for %s and %s", target, source, target)
	toFlagCheck(&cs, s.o.To, target)
	cs.add("node to resume on is Ready", states[source] == "Ready", "node %s is %s", source, states[source])
	cs = append(cs, s.workloadCheck(ctx, snap))
	if len(cs.failed()) > 0 {
		return s.refuse(fmt.Sprintf("roll back the migration of volume %s (resume it on %s)", s.vol, source), cs)
	}
	s.infof("Volume %s: %v.", s.vol, wn)
	build := s.withoutNodeBuild(source, target, "roll back")
	if s.o.dryRun != cmdutil.DryRunNone {
		return s.dryRunStep(ctx, snap, "Resume on "+source+":", "roll back", build)
	}
	if err := s.prompt(ctx, fmt.Sprintf("Remove the csi-attacher ticket of %s so that Longhorn attaches volume %s to %s?", target, s.vol, source)); err != nil {
		return err
	}
	return s.resumeOn(ctx, build, source, target, "roll back")
}

// withoutNodeBuild decides the removal of target's tickets on a fresh read:
// the volume must still be in that state with the same ends.
func (s *session) withoutNodeBuild(source, target, what string) func(*snapshot) (write, error) {
	return func(sn *snapshot) (write, error) {
		if src, tgt := sn.withoutNode(); src != source || tgt != target {
			return write{}, &refusal{what: what + " (state changed since it was read)", failed: []check{{Name: "still without a node, tickets for " + source + " and " + target,
				Detail: fmt.Sprintf("now: spec.nodeID=%q spec.migrationNodeID=%q state %q", sn.volume.Spec.NodeID, sn.volume.Spec.MigrationNodeID, sn.volume.Status.State)}}}
		}
		return v15Driver{}.remove(sn, target, what)
	}
}

// afterWithoutNode ends a wait that found the migration left without a
// node: `migrate` (prefer = the source) resumes the volume on the source;
// `migrate confirm` (prefer = the target) changes nothing and says how.
func (s *session) afterWithoutNode(ctx context.Context, wn *withoutNodeError, prefer string) error {
	ctx = context.WithoutCancel(ctx)
	if prefer == wn.target {
		s.report()
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("nothing was changed: the migration of volume %s cannot be confirmed any more: %v; resume the volume on %s with: %s",
			s.vol, wn, wn.source, s.commandLine("migrate", "rollback", s.vol)))
	}
	if up, why := s.nodeUp(ctx, wn.source); !up {
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("volume %s was left detached by Longhorn with its migration to %s requested, and the source node %s is down (%s): Longhorn waits; when it is back run: %s",
			s.vol, wn.target, wn.source, why, s.commandLine("migrate", "rollback", s.vol)))
	}
	if err := s.resumeOn(ctx, s.withoutNodeBuild(wn.source, wn.target, "resume"), wn.source, wn.target, "resume"); err != nil {
		return err
	}
	s.report()
	return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("volume %s was not migrated to %s: Longhorn detached it after the migration failed; it was attached again and verified on %s", s.vol, wn.target, wn.source))
}
