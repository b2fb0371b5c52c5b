package fix_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// cluster is the package's API server, shared by every test (one start per
// package); tests that write call reset first and do not run in parallel.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, &cluster) }

// verifyPoll: verification polls quickly here; the default is meant for a
// cluster.
const verifyPoll = 50 * time.Millisecond

// run runs the real command tree with kubeconfig, stdin in (nil: empty, not
// a terminal) and the hooks h of this run.
func run(ctx context.Context, kubeconfig string, in io.Reader, h fix.Hooks, args ...string) clitest.Result {
	if h.PollInterval == 0 {
		h.PollInterval = verifyPoll
	}
	if in == nil {
		in = strings.NewReader("")
	}
	return clitest.RunWithHooks(ctx, kubeconfig, in, cmd.Hooks{Fix: h}, args...)
}

// reset empties the namespace.
func reset(t *testing.T) context.Context {
	t.Helper()
	return cluster.ResetForTest(t, 3*time.Minute)
}

func create(t *testing.T, ctx context.Context, o *testenv.Objects) {
	t.Helper()
	if err := testenv.Create(ctx, cluster, o); err != nil {
		t.Fatal(err)
	}
}

// runFix runs `kubectl longhorn-engines fix args...` through the real
// command tree against the test cluster.
func runFix(t *testing.T, ctx context.Context, args ...string) clitest.Result {
	t.Helper()
	return runFixWith(t, ctx, fix.Hooks{}, args...)
}

// runFixWith is runFix with hooks.
func runFixWith(t *testing.T, ctx context.Context, h fix.Hooks, args ...string) clitest.Result {
	t.Helper()
	res := run(ctx, cluster.KubeconfigPath(), nil, h, withTimeout(append([]string{"fix"}, args...))...)
	t.Logf("fix %s\n%s", strings.Join(args, " "), res)
	return res
}

func ri(r longhorn.Resource) interface {
	Get(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error)
} {
	return cluster.Dynamic().Resource(r.GVR()).Namespace(cluster.Namespace())
}

// versions maps "kind/name" to resourceVersion for every Longhorn object in
// the namespace: equal maps before and after a run mean nothing was written.
func versions(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	out, err := testenv.ResourceVersions(ctx, cluster, testenv.WrittenResources)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func getEngine(t *testing.T, ctx context.Context, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := ri(longhorn.Engines).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get engine %s: %v", name, err)
	}
	return u
}

// touch changes an object's annotations, bumping its resourceVersion the
// way any concurrent writer would.
func touch(t *testing.T, ctx context.Context, r longhorn.Resource, name string) {
	t.Helper()
	_, err := cluster.Dynamic().Resource(r.GVR()).Namespace(cluster.Namespace()).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"test/touched":"`+time.Now().Format(time.RFC3339Nano)+`"}}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("touch %s %s: %v", r.Plural, name, err)
	}
}

var (
	readFile = testenv.ReadFile
	noFile   = testenv.NoFile
)

// withTimeout adds a short --timeout unless one is given: without a
// controller nothing ever verifies, so a regression that writes when it
// should not fails in seconds instead of waiting the default 5 minutes.
func withTimeout(args []string) []string {
	for _, a := range args {
		if strings.HasPrefix(a, "--timeout") {
			return args
		}
	}
	return append(args, "--timeout", "10s")
}
