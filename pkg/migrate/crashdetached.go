package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// crashDetached returns the two nodes whose csi-attacher tickets hold the
// volume after Longhorn 1.7+ detached it mid-migration (the source engine
// crashed or its node was lost), nil when it is not in that state. Which of
// them was the source is not kept anywhere Longhorn writes.
func (s *snapshot) crashDetached() []string {
	return detect.CrashDetachedNodes(s.version, &s.volume, s.va)
}

// nodeStates reads the Ready condition of each node: "Ready", "down"
// (not Ready) or "missing"; a read error is returned.
func (s *session) nodeStates(ctx context.Context, nodes []string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range nodes {
		node, err := s.readNode(ctx, n)
		switch {
		case err != nil:
			return nil, err
		case node == nil:
			out[n] = "missing"
		case node.Ready():
			out[n] = "Ready"
		default:
			out[n] = "down"
		}
	}
	return out, nil
}

// crashDetachedAdvice says what Longhorn does next by itself (nothing) and
// the commands that resume the volume on each node that is Ready.
func (s *session) crashDetachedAdvice(nodes []string, states map[string]string) (next []string, words string) {
	var parts []string
	for _, n := range nodes {
		parts = append(parts, fmt.Sprintf("%s (%s)", n, orText(states[n], "not read")))
		if states[n] == "Ready" {
			next = append(next, s.commandLine("migrate", "confirm", s.vol, "--to", n))
		}
	}
	words = fmt.Sprintf("Longhorn detached the volume after its live migration between %s failed and will not attach it again by itself while both csi-attacher tickets are in place; "+
		"removing the ticket of one node resumes it on the other: keep the node the workload is to run on, never one that is down", strings.Join(parts, " and "))
	if len(next) == 0 {
		words += "; no node is Ready: wait for one to come back"
	}
	return next, words
}

// runCrashDetached is confirm or rollback of a volume Longhorn detached
// mid-migration: --to names the migration's target; confirm keeps its
// ticket, rollback keeps the other node's. The removal is one merge patch
// pinned to the VolumeAttachment's resourceVersion, re-decided on a fresh
// read; then the volume is verified attached on the kept node. rollback
// says which of the two asked.
func (s *session) runCrashDetached(ctx context.Context, snap *snapshot, nodes []string, rollback bool) error {
	states, err := s.nodeStates(ctx, nodes)
	if err != nil {
		return noCheck(err)
	}
	next, words := s.crashDetachedAdvice(nodes, states)
	what := "confirm"
	if rollback {
		what = "roll back"
	}
	if s.o.To == "" {
		s.infof("Volume %s: %s.", s.vol, words)
		for _, n := range next {
			s.infof("  %s", n)
		}
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("refusing to %s the migration of volume %s without --to: Longhorn detached it and keeps no record of which of %s was the target; nothing was changed",
			what, s.vol, strings.Join(nodes, " and ")))
	}
	if !slices.Contains(nodes, s.o.To) {
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("refusing to %s: --to %s is not one of the nodes with a csi-attacher ticket (%s); nothing was changed",
			what, s.o.To, strings.Join(nodes, ", ")))
	}
	keep, drop := s.o.To, ""
	for _, n := range nodes {
		if n != s.o.To {
			drop = n
		}
	}
	if rollback {
		keep, drop = drop, keep
	}
	cs := checks{}
	cs.add("node to resume on is Ready", states[keep] == "Ready", "node %s is %s; the other node %s is %s", keep, states[keep], drop, states[drop])
	cs.add("two csi-attacher tickets", len(nodes) == 2, "tickets for %s", strings.Join(nodes, ", "))
	cs = append(cs, s.workloadCheck(ctx, snap))
	if len(cs.failed()) > 0 {
		if states[keep] != "Ready" && states[drop] == "Ready" {
			s.infof("Node %s is %s: Longhorn would wait for it. Resume on %s instead: %s", keep, states[keep], drop, s.commandLine("migrate", "confirm", s.vol, "--to", drop))
		}
		return s.refuse(fmt.Sprintf("%s the migration of volume %s (resume it on %s)", what, s.vol, keep), cs)
	}
	s.infof("Volume %s: %s.", s.vol, words)
	if s.o.dryRun != cmdutil.DryRunNone {
		return s.dryRunStep(ctx, snap, "Resume on "+keep+":", what, s.crashBuild(nodes, drop, what))
	}
	if err := s.prompt(ctx, fmt.Sprintf("Remove the csi-attacher ticket of %s so that Longhorn attaches volume %s to %s?", drop, s.vol, keep)); err != nil {
		return err
	}
	return s.resumeOn(ctx, s.crashBuild(nodes, drop, what), keep, drop, what)
}

// crashBuild decides the ticket removal on a fresh read: the volume must
// still be detached with the same tickets.
func (s *session) crashBuild(nodes []string, drop, what string) func(*snapshot) (write, error) {
	return func(sn *snapshot) (write, error) {
		if got := sn.crashDetached(); !slices.Equal(got, nodes) {
			return write{}, &refusal{what: what + " (state changed since it was read)", failed: []check{{Name: "still detached with tickets for " + strings.Join(nodes, ", "), Detail: fmt.Sprintf("now: %v", got)}}}
		}
		return v15Driver{}.remove(sn, drop, what)
	}
}

// resumeOn removes drop's csi-attacher tickets (build decides the write on
// a fresh read) and verifies the volume attached on keep.
func (s *session) resumeOn(ctx context.Context, build func(*snapshot) (write, error), keep, drop, what string) error {
	_, err := s.send(ctx, build)
	if err != nil {
		var ref *refusal
		if errors.As(err, &ref) {
			return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("nothing was changed: %w", err))
		}
		if ok, _ := s.landed(ctx, func(sn *snapshot) bool { return len(sn.csiTicketsOn(drop)) == 0 }); !ok {
			return cmdutil.WithCode(cmdutil.ExitNeedsAction, fmt.Errorf("%s failed, nothing was changed: %w", what, describeErr("remove the ticket", err)))
		}
		s.infof("  the ticket removal landed although the request reported: %v", err)
	}
	s.step("Removed the csi-attacher ticket of %s: Longhorn attaches volume %s to %s.", drop, s.vol, keep)
	vsnap, v, err := s.waitVerified(ctx, keep)
	if err != nil {
		s.step("Not verified: %v.", err)
		s.report()
		return cmdutil.WithCode(cmdutil.ExitAttention, fmt.Errorf("the ticket of %s was removed but volume %s is not verified on %s: %w; check with: %s",
			drop, s.vol, keep, err, s.commandLine("migrate", "status", s.vol)))
	}
	s.step("Verified: %s.", v.summary(vsnap, keep))
	s.outf("volume.longhorn.io %q attached to %s", s.vol, keep)
	return nil
}

// crashDetachedStatus fills st for a volume in the crash-detached state.
func (s *session) crashDetachedStatus(ctx context.Context, st *Status, nodes []string) {
	states, err := s.nodeStates(ctx, nodes)
	if err != nil {
		states = map[string]string{}
	}
	st.Phase = PhaseCrashDetached
	st.Next, st.Message = s.crashDetachedAdvice(nodes, states)
	st.LonghornNext = "nothing: it waits for one csi-attacher ticket to be removed (event MigrationFailed)"
}
