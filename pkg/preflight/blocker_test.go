package preflight

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
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
	if !strings.Contains(b.Resolve, "migrate confirm vol") {
		t.Errorf("in flight: the confirm is not offered: %+v", b)
	}
	// On 1.12 the confirm's clean-up can wipe data: the rollback only.
	st112 := &longhorn.State{Namespace: longhorn.DefaultNamespace, Version: longhorn.MustParseVersion("v1.12.0")}
	if b, ok := blockerFor(st112, &f); !ok || !strings.Contains(b.Command, "migrate rollback vol") || strings.Contains(b.Resolve, "migrate confirm") || !strings.Contains(b.Resolve, docs.ConfirmCleanup) {
		t.Errorf("in flight on 1.12: %+v", b)
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

// TestBlockerForSharedDirectory: the repair fix makes is the command, with
// the replica it deactivates; refused, scan's reason.
func TestBlockerForSharedDirectory(t *testing.T) {
	st := &longhorn.State{Namespace: longhorn.DefaultNamespace}
	f := detect.Finding{Volume: "vol", Type: detect.TypeSharedReplicaDirectory, Severity: detect.SeverityCritical, Action: detect.ActionSetReplicas,
		ReplicaChanges: []detect.ReplicaChange{{Replica: "vol-r-2", FromEngine: "vol-e-0", ToEngine: "vol-e-0", FromActive: true}}}
	b, ok := blockerFor(st, &f)
	if !ok || !strings.Contains(b.Command, "fix vol") || !strings.Contains(b.Resolve, "spec.active=false on vol-r-2") {
		t.Fatalf("repairable: %+v", b)
	}
	f.Action, f.ReplicaChanges, f.Reason = detect.ActionNone, nil, "not safe to repair because a migration is requested"
	if b, ok := blockerFor(st, &f); !ok || strings.Contains(b.Command, "fix") || b.Resolve != f.Reason {
		t.Errorf("refused: %+v", b)
	}
}
