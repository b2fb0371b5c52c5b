package preflight_test

import (
	"flag"
	"regexp"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
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
	testenv.Golden(t, name, normalise(got), *update)
}
