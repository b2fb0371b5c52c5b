package testenv

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// MatrixEnv names the directory where a test binary records what each
// release's scenarios proved, one file per test binary (realtest.json,
// fix.json): hack/genmatrix renders docs/support-matrix.md's table from
// them. Only make test-releases sets it, so a plain make test leaves the
// source tree as it found it.
const MatrixEnv = "LHE_MATRIX_DIR"

// MatrixCell is one scenario's outcome on one release, per world: "pass"
// (the test's assertions held: converged, no active replica deleted,
// nothing wiped, as that test checks) or "fail".
type MatrixCell struct {
	// Real: Longhorn's own controllers of the release.
	Real string `json:"real,omitempty"`
	// Sim: lhsim's controllers playing the release.
	Sim string `json:"lhsim,omitempty"`
}

// Matrix is a record: release → scenario → outcome.
type Matrix map[string]map[string]*MatrixCell

var matrixRec struct {
	sync.Mutex
	// started: releases this process has written, whose older entries a
	// run without -run has already dropped
	started map[string]bool
}

// RecordScenario records, once t ends, whether the scenario t runs on
// release passed, on Longhorn's own controllers (real) or on lhsim's. The
// scenario is t's name without the release ("TestDifferential/confirm").
// A skipped test records nothing.
func RecordScenario(t *testing.T, release string, real bool) {
	dir := os.Getenv(MatrixEnv)
	if dir == "" {
		return
	}
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
		outcome := "pass"
		if t.Failed() {
			outcome = "fail"
		}
		file := filepath.Join(dir, strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")+".json")
		filtered := false
		if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
			filtered = true
		}
		if err := recordOutcome(file, filtered, release, strings.Join(parts, "/"), real, outcome); err != nil {
			t.Errorf("record the support matrix: %v", err)
		}
	})
}

// recordOutcome merges one outcome into file at once, so that a run
// stopped half-way keeps what it proved. A run of every test (not filtered
// by -run) replaces each release's entries the first time it writes that
// release; a filtered run only updates the scenarios it ran.
func recordOutcome(file string, filtered bool, release, scenario string, real bool, outcome string) error {
	matrixRec.Lock()
	defer matrixRec.Unlock()
	m := Matrix{}
	if data, err := os.ReadFile(file); err == nil {
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
	} else if !os.IsNotExist(err) {
		return err
	}
	if matrixRec.started == nil {
		matrixRec.started = map[string]bool{}
	}
	if !matrixRec.started[release] {
		matrixRec.started[release] = true
		if !filtered {
			delete(m, release)
		}
	}
	if m[release] == nil {
		m[release] = map[string]*MatrixCell{}
	}
	c := m[release][scenario]
	if c == nil {
		c = &MatrixCell{}
		m[release][scenario] = c
	}
	if real {
		c.Real = outcome
	} else {
		c.Sim = outcome
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}
