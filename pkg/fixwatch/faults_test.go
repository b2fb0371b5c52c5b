package fixwatch_test

import (
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// The guard's informers under throttling, expired watches (410 Gone) and
// dropped watch connections: it keeps watching, repairs the bug once, and
// sends each repair write exactly once. (API server restarts:
// TestGuardSurvivesAPIServerRestart.)
func TestGuardSurvivesThrottlingAndExpiredWatches(t *testing.T) {
	e := newSim(t, "v1.4.3", "")
	vol := "vol-faults"
	e.CreateAttached(vol)
	p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
	p.Add(
		faultproxy.Rule{Verb: "list", First: 4, Fault: faultproxy.Status429, RetryAfter: 1},
		faultproxy.Rule{Verb: "watch", Resource: "engines", First: 2, Fault: faultproxy.Status410},
		faultproxy.Rule{Verb: "watch", Resource: "volumes", First: 2, Fault: faultproxy.ResetBefore},
		faultproxy.Rule{Verb: "list", Resource: "replicas", First: 2, Fault: faultproxy.Status503},
	)
	g := startGuard(t, e.Ctx, kc, e.NS, "--yes", "--settle", settle.String(), "--backup-dir", t.TempDir())
	_, mig := e.StartMigration(vol)
	e.confirmWithFault(vol)
	out := g.awaitOutcome(e.Ctx, vol, 1)
	if out.Result != fix.ResultRepaired {
		t.Errorf("outcome %s: %s", out.Result, out.Detail)
	}
	e.ExpectConverged(vol, testenv.NodeB, mig)
	res := g.stop()
	if res.Code != 0 {
		t.Errorf("exit %d\n%s", res.Code, res)
	}
	if n := len(g.outcomes(vol)); n != 1 {
		t.Errorf("%d repairs of %s, want 1", n, vol)
	}
	// Each changed object (the replicas first, then the stale engine) was
	// written exactly once; the dry-run permission probe is not a repair.
	writes, engines := 0, 0
	for _, name := range out.Changed {
		n := p.Count("patch", "engines", name) + p.Count("delete", "engines", name)
		engines += n
		writes += n + p.Count("patch", "replicas", name)
	}
	if writes != len(out.Changed) || engines != 1 {
		t.Errorf("%d writes (%d of engines) reached the server for %d changed object(s): a repair was missed or repeated", writes, engines, len(out.Changed))
	}
	injected := 0
	for _, r := range p.Requests() {
		if r.Fault != "" {
			injected++
		}
	}
	if injected < 6 {
		t.Errorf("only %d faults injected: the test proves little", injected)
	}
}
