package explore

import (
	"flag"
	"os"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

var (
	skipReason string
	clusters   = map[string]*testcluster.Cluster{} // by release
	clusterErr = map[string]error{}
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

// run starts one API server per release with that release's own CRDs
// (lhreal.StartServers), as internal/realtest does.
func run(m *testing.M) int {
	if testing.Short() {
		skipReason = "-short: builds Longhorn's controllers and starts API servers"
		return m.Run()
	}
	srv := lhreal.StartServers(selectedReleases(), !simOracle())
	clusters, clusterErr = srv.Clusters, srv.Errs
	code := m.Run()
	srv.Stop()
	return code
}

// selectedReleases are lhreal.Releases(), or the one EXPLORE_RELEASE names.
func selectedReleases() []string {
	if r := os.Getenv("EXPLORE_RELEASE"); r != "" {
		return []string{r}
	}
	return lhreal.Releases()
}

// clusterFor returns the release's API server or skips/fails the test.
func clusterFor(t *testing.T, rel string) *testcluster.Cluster {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	if err := clusterErr[rel]; err != nil {
		t.Fatalf("Longhorn %s: %v", rel, err)
	}
	c := clusters[rel]
	if c == nil {
		t.Skipf("Longhorn %s not selected", rel)
	}
	return c
}

// simOracle: EXPLORE_ORACLE=sim has lhsim play the controllers (a quick
// try of the explorer; not a proof: docs/testing.md).
func simOracle() bool { return os.Getenv("EXPLORE_ORACLE") == "sim" }
