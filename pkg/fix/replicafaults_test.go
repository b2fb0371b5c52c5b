package fix_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// A replica patch whose answer is lost is read back, never resent, and
// reported like an engine write: before, a reset after the server applied
// it stopped the run with "no engine was changed" and no word of the
// replica that was.
func TestFixReplicaWriteAnswerLost(t *testing.T) {
	p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
	for _, tt := range []lostWrite{
		{"reset after forwarding", faultproxy.ResetAfter, true, 0, []string{"answer to the patch of replica", "was lost", "deactivated"}, "readBack=applied"},
		{"reset before forwarding", faultproxy.ResetBefore, false, 1, []string{"did not happen", "it was not retried", "written: none", "the volume is as it was"}, "readBack=not-applied"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol-a"))
			stale := testenv.EngineName(testenv.L14a, "vol-a", 0)
			res, dir := fixUnderFault(t, ctx, p, kc, faultproxy.Rule{Verb: "patch", Resource: longhorn.Replicas.Plural, Fault: tt.fault, First: 1}, tt.code,
				"vol-a", "--yes", "--wait=false")
			expectReported(t, res, dir, tt.out, tt.log)
			var first string
			for _, r := range p.Requests() {
				if r.Verb == "patch" && r.Resource == longhorn.Replicas.Plural {
					first = r.Name
					break
				}
			}
			if n := p.Count("patch", longhorn.Replicas.Plural, first); n != btoi(tt.applied) {
				t.Errorf("%d patches of %s reached the server, want %d (never resent)", n, first, btoi(tt.applied))
			}
			u, err := ri(longhorn.Engines).Get(ctx, stale, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			active, _, _ := unstructured.NestedBool(u.Object, "spec", "active")
			if active == tt.applied {
				t.Errorf("stale engine active=%t after the run", active)
			}
			if !tt.applied {
				testenv.Contains(t, "output", res.Stdout, "engine "+stale+" (still active)")
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
