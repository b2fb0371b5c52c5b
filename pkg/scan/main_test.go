package scan_test

import (
	"context"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, &cluster) }

// reset gives a test an empty Longhorn namespace.
func reset(t *testing.T) context.Context {
	t.Helper()
	ctx := context.Background()
	if err := cluster.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}
