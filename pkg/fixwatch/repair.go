package fixwatch

import (
	"context"
	"fmt"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// repair runs fix's pipeline on one volume that has settled. It runs in its
// own goroutine so that events keep being reported while fix waits for
// Longhorn to finish.
func (g *Guard) repair(vol string, sig signature) {
	defer g.repairs.Done()
	ctx := g.runCtx
	select {
	case g.sem <- struct{}{}:
		defer func() { <-g.sem }()
	case <-ctx.Done():
		g.finish(vol, sig, fix.Outcome{Volume: vol, Result: fix.ResultNotAttempted, Detail: "not attempted: the guard stopped before it was this volume's turn"})
		return
	}
	g.finish(vol, sig, g.attempt(ctx, vol, sig))
}

// attempt plans from a fresh read (the caches may lag behind the server)
// and acts only when that plan is the state that settled: same survivor,
// same stale engines by uid, same action. That read is fix's re-check: fix
// backs up what it read, writes with uid and resourceVersion preconditions
// taken from it and waits for Longhorn to finish.
func (g *Guard) attempt(ctx context.Context, vol string, sig signature) fix.Outcome {
	planned, err := g.r.Plan(ctx, vol)
	if err != nil {
		out := fix.Outcome{Volume: vol, Result: fix.ResultFailed, Detail: "reading the volume before the repair failed, nothing written: " + err.Error()}
		g.r.Printer.Outcome(out)
		return out
	}
	if ps := plannedSignature(planned.Planned); ps != sig {
		detail := "skipped, nothing written: a fresh read of the volume calls for no repair now: " + planned.Why
		if !ps.empty() {
			detail = "skipped, nothing written: a fresh read of the volume differs from the watched state (engines replaced or the action changed)"
		}
		out := fix.Outcome{Volume: vol, Result: fix.ResultSkipped, Detail: detail}
		g.r.Printer.Outcome(out)
		return out
	}
	return g.r.RepairFresh(ctx, planned)
}

// finish records an outcome, schedules a retry of a skipped or failed
// repair, and stops the whole run after inverted replica flags.
func (g *Guard) finish(vol string, sig signature, out fix.Outcome) {
	now := time.Now()
	g.mu.Lock()
	g.records = append(g.records, out)
	inverted := out.Result == fix.ResultInverted
	if inverted {
		g.inverted = append(g.inverted, vol)
	}
	retry := g.t.finished(vol, sig, out, now)
	attempts := g.t.get(vol).attempts
	closing := g.closing
	cancel := g.cancel
	g.mu.Unlock()
	g.m.repaired(vol, out, now)
	fix.RecordOutcome(g.ev, g.volumeRef(vol), sig.action, out)
	if retry && !closing {
		g.out.Printf("%s %q: will look again in %s (attempt %d of %d)", longhorn.Volumes.Qualified(), vol, g.settle, attempts+1, maxAttempts)
	}
	g.queue.Add(vol)
	g.hooks.finished(g.ns, out)
	if inverted {
		g.errOut.Printf("%s", fmt.Sprintf("STOP: replica flags are inverted on volume %s after the repair; the guard makes no further change to any volume", vol))
		cancel()
	}
}
