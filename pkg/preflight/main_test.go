package preflight_test

import (
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

// cluster is the package's API server; every simulator test runs in a
// namespace of its own on it.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, &cluster) }
