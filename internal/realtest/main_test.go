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
	"path/filepath"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

var (
	pluginBin string
	suite     lhreal.Suite
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if suite.Short() {
		return m.Run()
	}
	tmp, err := os.MkdirTemp("", "lhe-realtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "realtest:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	pluginBin = filepath.Join(tmp, "kubectl-longhorn_engines")
	if err := testenv.BuildPlugin(context.Background(), pluginBin); err != nil {
		fmt.Fprintln(os.Stderr, "realtest: build the plugin:", err)
		return 1
	}
	// One API server per release, with that release's own CRDs.
	return suite.Run(m, lhreal.Releases(), true)
}
