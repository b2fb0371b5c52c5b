package scan_test

import (
	"context"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
)

// oneErrorLine asserts the exit code, an empty stdout and exactly one
// "error: ..." line on stderr containing want.
func oneErrorLine(t *testing.T, res clitest.Result, code int, want string) {
	t.Helper()
	if res.Code != code {
		t.Fatalf("want exit %d:\n%s", code, res)
	}
	if res.Stdout != "" {
		t.Errorf("stdout should be empty:\n%s", res)
	}
	lines := strings.Split(strings.TrimSpace(res.Stderr), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") || !strings.Contains(lines[0], want) {
		t.Errorf("want one error line containing %q:\n%s", want, res)
	}
}

func TestScanUnknownVolumeExitsTwo(t *testing.T) {
	ctx := reset(t)
	if err := testenv.Create(ctx, cluster, testenv.Nodes().Add(testenv.Healthy("v1.4.3", "vol-1"))); err != nil {
		t.Fatal(err)
	}
	res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "scan", "vol-1", "nope")
	oneErrorLine(t, res, 2, `volume "nope" not found in namespace "longhorn-system"`)
}

func TestScanWrongNamespaceExitsTwo(t *testing.T) {
	ctx := reset(t)
	if err := testenv.Create(ctx, cluster, testenv.Nodes().Add(testenv.Healthy("v1.4.3", "vol-1"))); err != nil {
		t.Fatal(err)
	}
	res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "scan", "-n", "default")
	oneErrorLine(t, res, 2, `no Longhorn found in namespace "default"`)
}

func TestScanUnreachableServerExitsTwo(t *testing.T) {
	res := clitest.New(t, "").Run(context.Background(), "scan", "--server", "https://127.0.0.1:1", "--insecure-skip-tls-verify")
	oneErrorLine(t, res, 2, "cannot reach the Kubernetes API server")
}

// Forbidden reads (a required one, and the optional instance managers) are
// tested on Kubernetes' own RBAC: internal/e2e (TestDocumentedRBAC,
// TestScanWithoutInstanceManagerRights).

func TestScanWithoutLonghornCRDsExitsTwo(t *testing.T) {
	ctx := context.Background()
	bare, err := testcluster.Start(ctx, testcluster.Options{SkipCRDs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Stop()
	res := clitest.New(t, bare.KubeconfigPath()).Run(ctx, "scan")
	oneErrorLine(t, res, 2, "Longhorn is not installed")
}

func TestScanBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"scan", "-o", "xml"},
		{"scan", "--color", "sometimes"},
	} {
		res := clitest.New(t, cluster.KubeconfigPath()).Run(context.Background(), args...)
		if res.Code != 2 || !strings.HasPrefix(res.Stderr, "error: ") {
			t.Errorf("%v: want exit 2 with an error line:\n%s", args, res)
		}
	}
}
