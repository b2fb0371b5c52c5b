package fix_test

import (
	"context"
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

// cli is the plugin's command line against kubeconfig with fix's hooks h,
// whose verification polls every verifyPoll unless h says otherwise.
func cli(t testing.TB, kubeconfig string, h fix.Hooks) clitest.Runner {
	if h.PollInterval == 0 {
		h.PollInterval = verifyPoll
	}
	return clitest.New(t, kubeconfig).Hooks(cmd.Hooks{Fix: h})
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
// command tree against the test cluster, with a short --timeout (fixArgs).
func runFix(t *testing.T, ctx context.Context, args ...string) clitest.Result {
	return cli(t, cluster.KubeconfigPath(), fix.Hooks{}).Run(ctx, fixArgs(args...)...)
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

// fixArgs is the command line `fix args...` with a short --timeout unless
// args give one: without a controller nothing ever verifies, so a
// regression that writes when it should not fails in seconds instead of
// waiting the default 5 minutes.
func fixArgs(args ...string) []string {
	args = append([]string{"fix"}, args...)
	for _, a := range args {
		if strings.HasPrefix(a, "--timeout") {
			return args
		}
	}
	return append(args, "--timeout", "10s")
}
