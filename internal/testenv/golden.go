package testenv

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// update is -update of every test binary that compares with Golden.
var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Golden compares a command's output with testdata/<name> in the test's
// package directory; with -update it writes the file first. Callers
// normalise what varies from run to run (Ages).
func Golden(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
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

var age = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m\d+s)\b`)

// Ages replaces the ages in s (250ms, 12s, 3m4s), which come from the
// clock, with <age>.
func Ages(s string) string { return age.ReplaceAllString(s, "<age>") }
