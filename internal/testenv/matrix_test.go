package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A run of every test replaces what an earlier run recorded for a release
// once, then adds to it; a filtered run keeps the scenarios it did not run.
func TestRecordOutcome(t *testing.T) {
	read := func(file string) Matrix {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		m := Matrix{}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	record := func(file string, filtered bool, rel, sc string, real bool, outcome string) {
		t.Helper()
		if err := recordOutcome(file, filtered, rel, sc, real, outcome); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "matrix", "realtest.json")
	old := `{"v1.4.3":{"TestGone":{"real":"pass"}},"v1.5.3":{"TestKept":{"real":"fail"}}}`
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}

	matrixRec.started = nil
	record(file, false, "v1.4.3", "TestA", true, "pass")
	record(file, false, "v1.4.3", "TestA", false, "fail")
	record(file, false, "v1.4.3", "TestB", true, "pass")
	want := Matrix{
		"v1.4.3": {"TestA": {Real: "pass", Sim: "fail"}, "TestB": {Real: "pass"}},
		"v1.5.3": {"TestKept": {Real: "fail"}},
	}
	if got := read(file); !reflect.DeepEqual(got, want) {
		t.Errorf("full run: got %v, want %v", got, want)
	}

	matrixRec.started = nil
	record(file, true, "v1.5.3", "TestNew", true, "pass")
	want["v1.5.3"]["TestNew"] = &MatrixCell{Real: "pass"}
	if got := read(file); !reflect.DeepEqual(got, want) {
		t.Errorf("filtered run: got %v, want %v", got, want)
	}
}
