package migrate

import (
	"encoding/json"
	"errors"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// driver is how one Longhorn generation is told to start, confirm and roll
// back a live migration. Every method returns the
// single write to make from a fresh snapshot; none of them sends anything.
type driver interface {
	// mechanism names what the driver writes, for messages.
	mechanism() string
	start(s *snapshot, to string) (write, error)
	confirm(s *snapshot, to string) (write, error)
	rollback(s *snapshot, to string) (write, error)
	// started reports whether Longhorn has taken the migration to node to
	// on board; the string says what is still missing.
	started(s *snapshot, to string) (bool, string)
	// pending reports whether a start for node to is still in place, i.e.
	// a rollback has something to undo.
	pending(s *snapshot, to string) bool
	// confirmed reports whether a confirm for node to has been accepted,
	// to tell a lost response from a refused write.
	confirmed(s *snapshot, to string) bool
}

// driverFor picks the generation: VolumeAttachment tickets from 1.5.0,
// spec.migrationNodeID before.
func driverFor(v longhorn.Version) driver {
	if v.HasVolumeAttachments() {
		return v15Driver{}
	}
	return v14Driver{}
}

// write is one JSON merge patch of one object, pinned to the resourceVersion
// the decision was made on: the API server refuses it with 409 Conflict if the
// object changed since, and the step is decided again from a fresh read.
type write struct {
	res             longhorn.Resource
	name            string
	resourceVersion string
	// body is the merge patch without metadata.
	body map[string]any
	// what says in words what the patch does.
	what string
}

// patch renders the merge patch with the resourceVersion precondition.
func (w write) patch() ([]byte, error) {
	if w.resourceVersion == "" {
		return nil, errors.New("internal error: a write without resourceVersion")
	}
	p := map[string]any{"metadata": map[string]any{"resourceVersion": w.resourceVersion}}
	for k, v := range w.body {
		p[k] = v
	}
	return json.Marshal(p)
}

// migrationTarget is the node a migration in flight goes to: spec first,
// then (1.5+) the status Longhorn keeps until confirm or rollback finish,
// then (1.5+) a second csi-attacher ticket Longhorn has not acted on yet.
func migrationTarget(s *snapshot) string {
	v := &s.volume
	if v.Spec.MigrationNodeID != "" {
		return v.Spec.MigrationNodeID
	}
	if v.Status.CurrentMigrationNodeID != "" {
		return v.Status.CurrentMigrationNodeID
	}
	if s.va != nil && v.Spec.NodeID != "" {
		for _, t := range s.va.CSITickets() {
			if t.NodeID != "" && t.NodeID != v.Spec.NodeID {
				return t.NodeID
			}
		}
	}
	return ""
}
