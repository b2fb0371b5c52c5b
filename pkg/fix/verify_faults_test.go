package fix_test

import (
	"path/filepath"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The reads of the whole run — plan, re-check, and the verification wait
// after the writes — retry transient errors: with every second read
// answered 503 or dropped, fix still repairs the seed's state, sends each
// write once, and exits 0 only after verifying it on the simulator.
func TestFixVerifiesUnderFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault faultproxy.Fault
	}{
		{"503", faultproxy.Status503},
		{"reset before forwarding", faultproxy.ResetBefore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newSim(t, "v1.4.3")
			vol := "vol-bug"
			old, mig := e.produceBug(vol)
			p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
			for _, verb := range []string{"get", "list"} {
				p.Add(faultproxy.Rule{Verb: verb, Every: 2, First: 400, Fault: tc.fault})
			}
			args := []string{"fix", "-n", e.NS, vol, "--yes", "--backup-dir", filepath.Join(t.TempDir(), "backup"),
				"--timeout", "60s", "--request-timeout", "20s"}
			res := cli(t, kc, fix.Hooks{}).Run(e.Ctx, args...)
			if res.Code != cmdutil.ExitOK {
				t.Fatalf("exit %d, want 0", res.Code)
			}
			testenv.Contains(t, "stdout", res.Stdout, `engine.longhorn.io "`+old+`" deactivated`,
				`volume.longhorn.io "vol-bug" repaired: verified: 1 engine(s): `+mig)

			// Faults hit the verification too: reads after the engine's
			// write were refused and retried.
			log := p.Requests()
			written, afterWrite := -1, 0
			for i, r := range log {
				if r.Verb == "patch" && r.Resource == longhorn.Engines.Plural && r.Name == old && r.Forwarded {
					written = i
				}
				if written >= 0 && i > written && r.Fault != "" {
					afterWrite++
				}
			}
			if written < 0 || afterWrite == 0 {
				t.Errorf("no fault after the engine write (at %d): the verification was not tested", written)
			}
			if n := p.Count("patch", longhorn.Engines.Plural, old); n != 1 {
				t.Errorf("the stale engine was patched %d times, want 1", n)
			}
			if n := p.Count("patch", longhorn.Engines.Plural, mig); n != 0 {
				t.Errorf("the survivor %s was patched %d times", mig, n)
			}
			e.WaitFor("testenv.Settled on node-b", vol, testenv.Settled(testenv.NodeB))
			e.ExpectNoDataLoss(vol)
		})
	}
}
