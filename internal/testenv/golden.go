package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// Golden compares a command's output with testdata/<name> in the test's
// package directory; with update set (each package's -update flag) it
// writes the file first. Callers normalise what varies from run to run.
func Golden(t testing.TB, name, got string, update bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; got:\n%s\nwant:\n%s", name, got, want)
	}
}
