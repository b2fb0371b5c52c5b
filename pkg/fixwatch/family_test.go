package fixwatch

import (
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// The guard's line for a state of the stuck-migration family names the
// state and where its by-hand repair is, and promises no repair.
func TestClassLineFamily(t *testing.T) {
	f := &detect.Finding{Volume: "pvc-1", Type: detect.TypeStaleMigrationNodeID, Severity: detect.SeverityWarning, Action: detect.ActionNone,
		Reason: "status.currentMigrationNodeID is node-b on a volume that is detached",
		Family: &detect.FamilyInfo{Doc: detect.FamilyDoc + "#stale-currentmigrationnodeid"}}
	line := classLine("pvc-1", f, signatureOf(f), time.Now(), time.Minute, 0)
	for _, want := range []string{"StaleMigrationNodeID (warning)", "kubectl longhorn-engines describe pvc-1", "docs/troubleshooting-migration-family.md#stale-currentmigrationnodeid"} {
		if !strings.Contains(line, want) {
			t.Errorf("no %q in %q", want, line)
		}
	}
	if strings.Contains(line, "the guard will") {
		t.Errorf("the guard promises a repair of a family state: %q", line)
	}

	// where fix repairs it (Longhorn 1.5.3), the guard still only reports
	// it, and points at fix
	f.Action = detect.ActionClearMigrationNode
	if !signatureOf(f).empty() {
		t.Errorf("the guard would repair %s (action %s)", f.Type, f.Action)
	}
	line = classLine("pvc-1", f, signatureOf(f), time.Now(), time.Minute, 0)
	if !strings.Contains(line, "the guard does not repair it: run kubectl longhorn-engines fix pvc-1") || strings.Contains(line, "the guard will") {
		t.Errorf("guard line for a state fix repairs: %q", line)
	}
}
