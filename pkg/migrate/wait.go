package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
)

// errInterrupted is a wait cut short by Ctrl-C or SIGTERM.
var errInterrupted = errors.New("interrupted")

// errConfirmedElsewhere: someone else (e.g. Kubernetes detaching the old
// node) confirmed the migration while this command waited.
var errConfirmedElsewhere = errors.New("the migration was confirmed outside this command")

// timeoutError is a wait that ran out of time.
type timeoutError struct {
	what  string
	after time.Duration
	last  string
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("timed out after %s waiting for %s (last seen: %s)", e.after, e.what, e.last)
}

// badStateError is a state that waiting does not resolve (detect's finding).
type badStateError struct{ finding detect.Finding }

func (e *badStateError) Error() string {
	return fmt.Sprintf("%s: %s", e.finding.Type, e.finding.Reason)
}

// pollResult is one look at a snapshot during a wait.
type pollResult struct {
	done   bool
	status string // what is still missing, shown as progress
	fail   error  // stop waiting now
}

// poll re-reads the volume every PollInterval until cond is done or fails,
// the timeout passes or ctx ends (progress.Poll: progress on stderr, read
// errors shown and retried, the last look at the deadline). A volume that
// is gone ends the wait.
func (s *session) poll(ctx context.Context, timeout time.Duration, what string, cond func(*snapshot) pollResult) (*snapshot, error) {
	start := time.Now()
	wait := s.progress.Begin("waiting for "+what, timeout)
	defer wait.End()
	var snap *snapshot
	last, err := progress.Poll(ctx, wait, s.o.PollInterval, timeout, func(ctx context.Context) (progress.Look, error) {
		var err error
		snap, err = s.read(ctx)
		switch {
		case isNotFound(err):
			return progress.Look{Fail: err}, nil
		case err != nil:
			return progress.Look{}, err
		}
		r := cond(snap)
		return progress.Look{Done: r.done, Status: r.status, Engines: progress.Engines(s.vol, snap.engines), Fail: r.fail}, nil
	})
	switch {
	case err == nil:
		return snap, nil
	case isNotFound(err):
		return nil, err
	case errors.Is(err, progress.ErrTimedOut):
		return snap, &timeoutError{what: what, after: timeout, last: last}
	case errors.Is(err, context.DeadlineExceeded):
		return nil, &timeoutError{what: what, after: time.Since(start).Round(time.Second), last: last}
	case errors.Is(err, context.Canceled):
		return nil, errInterrupted
	}
	return snap, err // cond's fail
}

func isNotFound(err error) bool {
	var nf *notFoundError
	return errors.As(err, &nf)
}

// settle is how long a bad state (two active engines, inverted flags) must
// last before it is reported: one read could catch Longhorn mid-sync.
func (s *session) settle() time.Duration {
	return 10 * s.o.PollInterval
}

// crashDetachedError: Longhorn detached the volume mid-migration (1.7+)
// and waits for one of the two csi-attacher tickets to be removed.
type crashDetachedError struct{ nodes []string }

func (e *crashDetachedError) Error() string {
	return fmt.Sprintf("Longhorn detached the volume after the migration failed (tickets for %s remain; event MigrationFailed)", strings.Join(e.nodes, " and "))
}

// nodeDownError: a node of the migration is not Ready.
type nodeDownError struct {
	node, role string // role: "source" or "target"
	why        string
}

func (e *nodeDownError) Error() string {
	return fmt.Sprintf("the %s node %s is down: %s", e.role, e.node, e.why)
}

// recreateGrace is how long a migration engine in error may take Longhorn
// to replace before a wait gives up on it.
func (s *session) recreateGrace() time.Duration {
	return min(s.o.Timeout, max(30*s.o.PollInterval, 30*time.Second))
}

// waitReady waits until a migration to node to is ready to confirm
// (checkReady). It ends early, with an error that says why, when Longhorn
// detached the volume (or, on 1.5 and 1.6, left its migration without a
// node), when the source engine is not running and its node is down (a
// rollback would wait for that node), when the target node stays down for
// settle(), and when a migration engine in error is not replaced, or a
// serving engine not restarted, within recreateGrace().
func (s *session) waitReady(ctx context.Context, to string) (*snapshot, error) {
	s.infof("Waiting up to %s for the migration engine on %s to be ready...", s.o.Timeout, to)
	var recreating, targetDown, salvaging time.Time
	lasted := func(since *time.Time, bad bool, d time.Duration) bool {
		if !bad {
			*since = time.Time{}
			return false
		}
		if since.IsZero() {
			*since = time.Now()
		}
		return time.Since(*since) >= d
	}
	return s.poll(ctx, s.o.Timeout, "the migration engine on "+to+" to be ready", func(sn *snapshot) pollResult {
		if s.drv.confirmed(sn, to) {
			return pollResult{fail: errConfirmedElsewhere}
		}
		if nodes := sn.crashDetached(); nodes != nil {
			return pollResult{fail: &crashDetachedError{nodes: nodes}}
		}
		if src, tgt := sn.withoutNode(); src != "" {
			return pollResult{fail: &withoutNodeError{version: sn.version, source: src, target: tgt}}
		}
		if sn.version.HasVolumeAttachments() && sn.volume.Spec.Migratable && sn.volume.Spec.NodeID == "" {
			// 1.5+ is detaching the volume after the source was lost; the
			// next reads show where it stops (crash-detached on 1.7+,
			// without a node on 1.5 and 1.6).
			return pollResult{status: "Longhorn is detaching the volume: the migration failed"}
		}
		if !s.drv.pending(sn, to) {
			return pollResult{fail: fmt.Errorf("the migration to %s was withdrawn outside this command (spec.nodeID=%q spec.migrationNodeID=%q)",
				to, sn.volume.Spec.NodeID, sn.volume.Spec.MigrationNodeID)}
		}
		r := checkReady(sn, s.drv, to)
		salvageLasted := lasted(&salvaging, r.salvaging, s.recreateGrace())
		if up, why := s.nodeUp(ctx, to); lasted(&targetDown, !up, s.settle()) {
			return pollResult{fail: &nodeDownError{node: to, role: "target", why: why}}
		}
		if r.failed != "" {
			if from := sn.volume.Spec.NodeID; from != "" {
				if up, why := s.nodeUp(ctx, from); !up {
					return pollResult{fail: &nodeDownError{node: from, role: "source", why: why + "; " + r.failed}}
				}
			}
			if r.salvaging && !salvageLasted {
				return pollResult{status: "waiting: " + r.failed + ": Longhorn detaches the volume and attaches it again on its node"}
			}
			if r.salvaging {
				return pollResult{fail: fmt.Errorf("%s, and Longhorn has not restarted it in %s", r.failed, s.recreateGrace())}
			}
			return pollResult{fail: errors.New(r.failed)}
		}
		if lasted(&recreating, r.recreating != "", s.recreateGrace()) {
			return pollResult{fail: fmt.Errorf("%s, and it has not been replaced in %s", r.recreating, s.recreateGrace())}
		}
		return pollResult{done: r.ready, status: "waiting: " + r.String()}
	})
}

// nodeUp reads a Longhorn node's Ready condition; a node that cannot be
// read counts as up (the wait goes on and reads it again).
func (s *session) nodeUp(ctx context.Context, name string) (bool, string) {
	n, err := s.readNode(ctx, name)
	switch {
	case err != nil:
		return true, ""
	case n == nil:
		return false, "no " + longhorn.Nodes.GroupResource() + " " + name
	}
	return n.Ready(), "Ready condition " + conditionStatus(n.Status.Conditions, "Ready")
}

// waitVerified says it verifies and waits, for at most recoveryTimeout(),
// until the volume is verified on node. A bad state that lasts settle()
// ends the wait with a badStateError.
func (s *session) waitVerified(ctx context.Context, node string) (*snapshot, verdict, error) {
	s.infof("Verifying volume %s on %s...", s.vol, node)
	var since time.Time
	var v verdict
	snap, err := s.poll(ctx, s.recoveryTimeout(), "the volume to settle on "+node, func(sn *snapshot) pollResult {
		v = checkVerified(sn, s.ns, node)
		if v.ok {
			return pollResult{done: true}
		}
		if v.bad == nil {
			since = time.Time{}
			return pollResult{status: "waiting: " + strings.Join(v.missing, "; ")}
		}
		if since.IsZero() {
			since = time.Now()
		}
		if time.Since(since) >= s.settle() {
			return pollResult{fail: &badStateError{finding: *v.bad}}
		}
		return pollResult{status: fmt.Sprintf("%s seen, checking it lasts: %s", v.bad.Type, strings.Join(v.missing, "; "))}
	})
	return snap, v, err
}
