package preflight_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// Legacy engine and replica names end in 8 random hex characters (Longhorn
// before 1.4.4 and 1.5.2); ages come from the clock. Everything else in the
// output is fixed by the scenario.
var (
	randomName = regexp.MustCompile(`-([er])-[0-9a-f]{8}\b`)
	age        = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s|m\d+s)\b`)
)

func normalise(s string) string {
	s = randomName.ReplaceAllString(s, "-$1-<id>")
	return age.ReplaceAllString(s, "<age>")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	got = normalise(got)
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
		t.Fatalf("%v (run go test ./pkg/preflight -update)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; got:\n%s\nwant:\n%s", name, got, want)
	}
}
