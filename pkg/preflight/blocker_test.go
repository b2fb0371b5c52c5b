package preflight

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TestBlockerForMigrationWarnings: a migration scan warns about (a rollback
// that would wipe a directory, a serving engine that failed) gets scan's
// reason and the inspect command, never the usual rollback.
func TestBlockerForMigrationWarnings(t *testing.T) {
	st := &longhorn.State{Namespace: longhorn.DefaultNamespace}
	f := detect.Finding{Volume: "vol", Type: detect.TypeMigrationInFlight, Severity: detect.SeverityInfo}
	f.Evidence.MigrationNodeID, f.Evidence.CurrentNodeID = "node-b", "node-a"
	b, ok := blockerFor(st, &f)
	if !ok || !strings.Contains(b.Command, "migrate rollback vol") {
		t.Fatalf("in flight: %+v", b)
	}
	f.Severity, f.Reason = detect.SeverityWarning, "do not roll back"
	b, ok = blockerFor(st, &f)
	if !ok || strings.Contains(b.Command, "rollback") || b.Resolve != "do not roll back" || !strings.Contains(b.Command, "scan vol -o wide") {
		t.Errorf("warning: %+v", b)
	}
	f.Type = detect.TypeMigrationFinishing
	if b, ok := blockerFor(st, &f); !ok || b.Resolve != "do not roll back" {
		t.Errorf("finishing warning: %+v", b)
	}
}
