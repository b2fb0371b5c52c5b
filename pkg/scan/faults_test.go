package scan_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
)

// scan through a proxy that fails requests on purpose. Transient failures
// are retried and the report is the one a healthy server gives; what
// cannot be read ends in one error line, exit 2 and no report.

func TestScanUnderFaults(t *testing.T) {
	ctx := reset(t)
	if err := testenv.Create(ctx, cluster, testenv.Nodes().Add(testenv.TwoActiveEngines("v1.4.3", "vol-a"))); err != nil {
		t.Fatal(err)
	}
	p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
	recovers := []struct {
		name string
		rule faultproxy.Rule
	}{
		{"429 with Retry-After", faultproxy.Rule{Verb: "list", Resource: "engines", First: 2, Fault: faultproxy.Status429, RetryAfter: 1}},
		{"503 with Retry-After", faultproxy.Rule{Verb: "list", Resource: "volumes", First: 2, Fault: faultproxy.Status503, RetryAfter: 1}},
		{"503 without Retry-After", faultproxy.Rule{Verb: "list", Resource: "replicas", First: 2, Fault: faultproxy.Status503}},
		{"500", faultproxy.Rule{Verb: "list", Resource: "engines", First: 2, Fault: faultproxy.Status500}},
		{"reset before forwarding", faultproxy.Rule{Verb: "list", Resource: "engines", First: 2, Fault: faultproxy.ResetBefore}},
		{"reset after forwarding", faultproxy.Rule{Verb: "list", Resource: "volumes", First: 1, Fault: faultproxy.ResetAfter}},
		{"slow", faultproxy.Rule{Verb: "list", Resource: "engines", First: 1, Fault: faultproxy.Slow, Delay: 1500 * time.Millisecond}},
		{"every second list", faultproxy.Rule{Verb: "list", Every: 2, First: 8, Fault: faultproxy.Status503}},
	}
	for _, tc := range recovers {
		t.Run("recovers/"+tc.name, func(t *testing.T) {
			p.Clear()
			p.ResetLog()
			p.Add(tc.rule)
			r := clitest.New(t, kc).Timeout(2*time.Minute).Run(context.Background(), "scan", "--request-timeout", "30s")
			if r.Code != 1 || strings.Contains(r.Stderr, "error: ") || !strings.Contains(r.Stdout, "vol-a") {
				t.Errorf("exit %d, want 1 with the finding of vol-a\n%s", r.Code, r)
			}
			if injected := countFaults(p); injected == 0 {
				t.Error("no fault was injected: the test proves nothing")
			}
		})
	}
	fails := []struct {
		name string
		rule faultproxy.Rule
		args []string
		want string
	}{
		{"500 every time", faultproxy.Rule{Verb: "list", Resource: "engines", Fault: faultproxy.Status500}, nil, "engines"},
		{"429 every time", faultproxy.Rule{Verb: "list", Resource: "replicas", Fault: faultproxy.Status429, RetryAfter: 1}, []string{"--request-timeout", "4s"}, "replicas"},
		{"timeout", faultproxy.Rule{Verb: "list", Resource: "volumes", Fault: faultproxy.Timeout}, []string{"--request-timeout", "2s"}, "volumes"},
		{"reset every time", faultproxy.Rule{Verb: "list", Resource: "engines", Fault: faultproxy.ResetBefore}, nil, "engines"},
	}
	for _, tc := range fails {
		t.Run("fails/"+tc.name, func(t *testing.T) {
			p.Clear()
			p.ResetLog()
			p.Add(tc.rule)
			start := time.Now()
			r := clitest.New(t, kc).Timeout(2*time.Minute).Run(context.Background(), append([]string{"scan"}, tc.args...)...)
			// one line that starts with "error: " (client-go's own message
			// may say "returned an error: " inside it)
			if r.Code != 2 || strings.Count("\n"+r.Stderr, "\nerror: ") != 1 || r.Stdout != "" || strings.Contains(r.Stderr, "No engine problems") {
				t.Errorf("exit %d, want 2 with one error line and no report\n%s", r.Code, r)
			}
			if !strings.Contains(r.Stderr, tc.want) {
				t.Errorf("the error does not name %s:\n%s", tc.want, r.Stderr)
			}
			if d := time.Since(start); d > 45*time.Second {
				t.Errorf("took %s: --request-timeout not honoured", d)
			}
		})
	}
}

func countFaults(p *faultproxy.Proxy) int {
	n := 0
	for _, r := range p.Requests() {
		if r.Fault != "" {
			n++
		}
	}
	return n
}
