package explore

import (
	"flag"
	"os"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
)

var suite lhreal.Suite

// TestMain starts one API server per release with that release's own CRDs
// (lhreal.StartServers), as internal/realtest does.
func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(suite.Run(m, selectedReleases(), !simOracle()))
}

// selectedReleases are lhreal.Releases(), or the one EXPLORE_RELEASE names.
func selectedReleases() []string {
	if r := os.Getenv("EXPLORE_RELEASE"); r != "" {
		return []string{r}
	}
	return lhreal.Releases()
}

// simOracle: EXPLORE_ORACLE=sim has lhsim play the controllers (a quick
// try of the explorer; not a proof: docs/testing.md).
func simOracle() bool { return os.Getenv("EXPLORE_ORACLE") == "sim" }
