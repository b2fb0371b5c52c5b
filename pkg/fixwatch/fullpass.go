package fixwatch

import (
	"context"
	"time"
)

// fullPassEvery is how often the guard classifies every watched volume
// again from its caches, with no event to prompt it. The time of the last
// full pass is a metric: an alert on its age catches a guard that is up
// but stuck (docs/observability.md). A pass reads only the caches.
const fullPassEvery = 5 * time.Minute

// startPass queues vols and remembers them: once each was classified, the
// pass is complete.
func (g *Guard) startPass(vols []string) {
	g.passMu.Lock()
	g.pass = make(map[string]bool, len(vols))
	for _, v := range vols {
		g.pass[v] = true
	}
	empty := len(g.pass) == 0
	g.passMu.Unlock()
	if empty {
		g.m.fullClassification(time.Now(), 0)
	}
	for _, v := range vols {
		g.queue.Add(v)
	}
}

// passDone marks vol classified in the current pass.
func (g *Guard) passDone(vol string) {
	g.passMu.Lock()
	if g.pass == nil || !g.pass[vol] {
		g.passMu.Unlock()
		return
	}
	delete(g.pass, vol)
	complete := len(g.pass) == 0
	g.passMu.Unlock()
	if complete {
		g.m.fullClassification(time.Now(), len(g.volumeNames()))
	}
}

// passes starts a full pass every fullPassEvery until ctx ends.
func (g *Guard) passes(ctx context.Context) {
	t := time.NewTicker(fullPassEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.startPass(g.volumeNames())
		}
	}
}
