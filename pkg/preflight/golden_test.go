package preflight_test

import (
	"regexp"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// Legacy engine and replica names end in 8 random hex characters (Longhorn
// before 1.4.4 and 1.5.2); ages come from the clock. Everything else in the
// output is fixed by the scenario.
var randomName = regexp.MustCompile(`-([er])-[0-9a-f]{8}\b`)

func golden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, name, testenv.Ages(randomName.ReplaceAllString(got, "-$1-<id>")))
}
