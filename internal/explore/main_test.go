package explore

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

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

// run starts one API server per release with that release's own CRDs, as
// internal/realtest does, after building the controllers outside any
// deadline (the first build is minutes on 2 cores).
func run(m *testing.M) int {
	if testing.Short() {
		skipReason = "-short: builds Longhorn's controllers and starts API servers"
		return m.Run()
	}
	var releases []string
	for _, rel := range selectedReleases() {
		if simOracle() {
			releases = append(releases, rel)
			continue
		}
		if _, err := lhreal.Binary(rel); err != nil {
			clusterErr[rel] = err
			continue
		}
		releases = append(releases, rel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, rel := range releases {
		clusterErr[rel] = func() error {
			crds, err := lhreal.CRDs(rel)
			if err != nil {
				return err
			}
			c, err := testcluster.Start(ctx, testcluster.Options{SkipCRDs: true})
			if err != nil {
				return err
			}
			clusters[rel] = c
			return c.InstallCRDYAML(ctx, crds)
		}()
	}
	code := m.Run()
	for _, c := range clusters {
		c.Stop()
	}
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
		t.Skip(fmt.Sprintf("Longhorn %s not selected", rel))
	}
	return c
}

// simOracle: EXPLORE_ORACLE=sim has lhsim play the controllers (a quick
// try of the explorer; not a proof: docs/testing.md).
func simOracle() bool { return os.Getenv("EXPLORE_ORACLE") == "sim" }
