package detect

import (
	"fmt"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TestRepairTable: the help's release table says what ReleaseRepair does.
// A row whose action no longer matches the code reads empty, which fails
// here; the fixed releases up to the newest proven one are repaired, not
// "no action" (fix's help once said so).
func TestRepairTable(t *testing.T) {
	for _, r := range RepairTable() {
		if r.Releases == "" || r.Action == "" {
			t.Errorf("row %+v: its action is not what ReleaseRepair answers", r)
		}
	}
	text := RepairTableText()
	for _, want := range []string{
		fmt.Sprintf("1.5.2-1.%d", newestProven.Minor),
		"deactivate the stale engine", "delete the stale engine",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if got := ReleaseRepair(longhorn.MustParseVersion("v1.10.0")); got != ActionDeactivate {
		t.Errorf("1.10.0: %s", got)
	}
}
