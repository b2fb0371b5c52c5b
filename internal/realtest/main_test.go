// Package realtest proves the plugin against Longhorn's own controllers:
// for each release with a module under test/longhorn (internal/lhreal), an
// API server with that release's CRDs, Longhorn's real volume (and from 1.5
// VolumeAttachment) controllers, and the simulator in instance-only mode
// playing the processes. The plugin runs as its built binary.
package realtest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

var (
	pluginBin  string
	skipReason string
	clusters   = map[string]*testcluster.Cluster{} // by release
	clusterErr = map[string]error{}
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if testing.Short() {
		skipReason = "-short: builds Longhorn's controllers and starts API servers"
		return m.Run()
	}
	tmp, err := os.MkdirTemp("", "lhe-realtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "realtest:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	pluginBin = filepath.Join(tmp, "kubectl-longhorn_engines")
	out, err := exec.Command("go", "build", "-o", pluginBin, "../../cmd/kubectl-longhorn-engines").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "realtest: build the plugin: %v\n%s", err, out)
		return 1
	}
	// The controller binaries are built first, outside the start-up
	// deadline: a cold build on a loaded 2-core machine has taken longer
	// than the ten minutes the API servers get, and a test's deadline must
	// not include one either.
	var releases []string
	for _, rel := range lhreal.Releases() {
		if _, err := lhreal.Binary(rel); err != nil {
			clusterErr[rel] = err
			continue
		}
		releases = append(releases, rel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// One API server per release, with that release's own CRDs.
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
	if err := writeMatrix(); err != nil {
		fmt.Fprintln(os.Stderr, "realtest: write the support matrix record:", err)
		return 1
	}
	return code
}
