package migrate

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// v14Driver drives Longhorn 1.3 and 1.4, where the volume's own spec is the
// interface (what the REST API's attach and detach do for the CSI driver):
// start = spec.migrationNodeID=B, confirm = spec.nodeID=B with
// migrationNodeID cleared in the same write, rollback = migrationNodeID
// cleared. Writing the Volume bypasses the REST API's checks, so precheck.go
// runs them first.
type v14Driver struct{}

func (v14Driver) mechanism() string { return "the volume's spec.migrationNodeID" }

func (v14Driver) start(s *snapshot, to string) (write, error) {
	return write{
		res: longhorn.Volumes, name: s.volume.Name, resourceVersion: s.volume.ResourceVersion,
		body: map[string]any{"spec": map[string]any{"migrationNodeID": to}},
		what: fmt.Sprintf("set spec.migrationNodeID=%s on volume %s", to, s.volume.Name),
	}, nil
}

func (v14Driver) confirm(s *snapshot, to string) (write, error) {
	if s.volume.Spec.MigrationNodeID != to {
		return write{}, fmt.Errorf("volume %s has spec.migrationNodeID=%q, not %q: nothing to confirm", s.volume.Name, s.volume.Spec.MigrationNodeID, to)
	}
	return write{
		res: longhorn.Volumes, name: s.volume.Name, resourceVersion: s.volume.ResourceVersion,
		body: map[string]any{"spec": map[string]any{"nodeID": to, "migrationNodeID": ""}},
		what: fmt.Sprintf("set spec.nodeID=%s and clear spec.migrationNodeID on volume %s", to, s.volume.Name),
	}, nil
}

func (v14Driver) rollback(s *snapshot, to string) (write, error) {
	if s.volume.Spec.MigrationNodeID != to || to == "" {
		return write{}, errNothingToRollBack
	}
	return write{
		res: longhorn.Volumes, name: s.volume.Name, resourceVersion: s.volume.ResourceVersion,
		body: map[string]any{"spec": map[string]any{"migrationNodeID": ""}},
		what: fmt.Sprintf("clear spec.migrationNodeID (%s) on volume %s", s.volume.Spec.MigrationNodeID, s.volume.Name),
	}, nil
}

func (v14Driver) started(s *snapshot, to string) (bool, string) {
	if s.volume.Spec.MigrationNodeID != to {
		return false, fmt.Sprintf("spec.migrationNodeID is %q", s.volume.Spec.MigrationNodeID)
	}
	if len(s.engines) < 2 {
		return false, "Longhorn has not created the migration engine yet"
	}
	return true, ""
}

func (v14Driver) pending(s *snapshot, to string) bool {
	return s.volume.Spec.MigrationNodeID == to && to != ""
}

func (v14Driver) confirmed(s *snapshot, to string) bool {
	return s.volume.Spec.NodeID == to && s.volume.Spec.MigrationNodeID == ""
}
