package realtest

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// matrixEnv names the file that records what each release's run proved,
// one entry per scenario (hack/genmatrix renders docs/support-matrix.md's
// table from it). Only make test-releases sets it: a plain make test leaves
// the source tree as it found it.
const matrixEnv = "REALTEST_MATRIX"

// Outcome of one scenario in one world: "pass" (the test's assertions held:
// converged, no active replica deleted, nothing wiped, as that test
// checks) or "fail".
type matrixCell struct {
	// Real: Longhorn's own controllers of the release.
	Real string `json:"real,omitempty"`
	// Sim: lhsim's own controllers playing the release (TestDifferential).
	Sim string `json:"lhsim,omitempty"`
}

var (
	matrixMu sync.Mutex
	// matrix[release][scenario]
	matrix = map[string]map[string]*matrixCell{}
)

// recordScenario records, once t ends, whether the scenario t runs on
// release passed in that world (real or lhsim). The scenario is t's name
// without the release ("TestDifferential/confirm").
func recordScenario(t *testing.T, release string, real bool) {
	t.Cleanup(func() {
		if t.Skipped() {
			return
		}
		var parts []string
		for _, p := range strings.Split(t.Name(), "/") {
			if p != release {
				parts = append(parts, p)
			}
		}
		name := strings.Join(parts, "/")
		outcome := "pass"
		if t.Failed() {
			outcome = "fail"
		}
		matrixMu.Lock()
		defer matrixMu.Unlock()
		if matrix[release] == nil {
			matrix[release] = map[string]*matrixCell{}
		}
		c := matrix[release][name]
		if c == nil {
			c = &matrixCell{}
			matrix[release][name] = c
		}
		if real {
			c.Real = outcome
		} else {
			c.Sim = outcome
		}
	})
}

// writeMatrix merges this run's outcomes into the file $REALTEST_MATRIX
// names: a release run without -run replaces that release's entries, a
// filtered run updates only the scenarios it ran.
func writeMatrix() error {
	matrixMu.Lock()
	defer matrixMu.Unlock()
	matrixFile := os.Getenv(matrixEnv)
	if matrixFile == "" || len(matrix) == 0 {
		return nil
	}
	all := map[string]map[string]*matrixCell{}
	if data, err := os.ReadFile(matrixFile); err == nil {
		if err := json.Unmarshal(data, &all); err != nil {
			return err
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	filtered := flag.Lookup("test.run").Value.String() != ""
	for rel, scenarios := range matrix {
		if !filtered || all[rel] == nil {
			all[rel] = map[string]*matrixCell{}
		}
		for name, c := range scenarios {
			all[rel][name] = c
		}
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(matrixFile), 0o755); err != nil {
		return err
	}
	return os.WriteFile(matrixFile, append(data, '\n'), 0o644)
}
