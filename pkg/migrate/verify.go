package migrate

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// verdict is the check after a confirm or a rollback that the volume is
// settled on node K.
type verdict struct {
	ok      bool
	engine  string // the one engine left, when there is one
	missing []string
	// bad is detect's finding when the volume is in a state that does not
	// resolve by waiting (badAfterConfirm). It must last (see settle in
	// wait.go) before it is reported.
	bad *detect.Finding
}

// badAfterConfirm: the finding types waiting does not resolve after a
// confirm or rollback.
func badAfterConfirm(t detect.Type) bool {
	switch t {
	case detect.TypeMultipleActiveEngines, detect.TypeInvertedReplicaFlags, detect.TypeConfirmWithoutEngine, detect.TypeEnginesOnOneNode:
		return true
	}
	return false
}

// checkVerified: exactly one Engine CR, active, running, on K, which is also
// spec.nodeID and status.currentNodeID; no migration left; every replica
// serves that engine and is active; on 1.5+ K's csi ticket is satisfied.
func checkVerified(s *snapshot, ns, node string) verdict {
	var v verdict
	miss := func(format string, args ...any) { v.missing = append(v.missing, fmt.Sprintf(format, args...)) }
	if f, ok := s.classify(ns); ok && badAfterConfirm(f.Type) {
		v.bad = &f
	}
	vol := &s.volume
	if vol.Spec.NodeID != node || vol.Status.CurrentNodeID != node {
		miss("volume spec.nodeID=%q status.currentNodeID=%q", vol.Spec.NodeID, vol.Status.CurrentNodeID)
	}
	if vol.Spec.MigrationNodeID != "" {
		miss("spec.migrationNodeID=%q", vol.Spec.MigrationNodeID)
	}
	if s.version.HasCurrentMigrationNodeID() && vol.Status.CurrentMigrationNodeID != "" {
		miss("status.currentMigrationNodeID=%q", vol.Status.CurrentMigrationNodeID)
	}
	switch len(s.engines) {
	case 0:
		miss("no engine")
	case 1:
		e := &s.engines[0]
		v.engine = e.Name
		if !e.IsActive() || e.Spec.NodeID != node || e.Status.CurrentState != longhorn.StateRunning {
			miss("engine %s: node %q active=%t deleting=%t state %q", e.Name, e.Spec.NodeID, e.Spec.Active, e.Deleting(), e.Status.CurrentState)
		}
		var wrong []string
		for _, r := range s.replicas {
			if r.Spec.EngineName != e.Name || !r.Spec.Active {
				wrong = append(wrong, fmt.Sprintf("%s (engine %s, active=%t)", r.Name, orNone(r.Spec.EngineName), r.Spec.Active))
			}
		}
		if len(wrong) > 0 {
			miss("replicas not flipped to %s: %v", e.Name, wrong)
		}
		if len(s.replicas) == 0 {
			miss("no replica")
		}
	default:
		names := make([]string, 0, len(s.engines))
		for i := range s.engines {
			e := &s.engines[i]
			n := fmt.Sprintf("%s@%s", e.Name, orNone(e.Spec.NodeID))
			switch {
			case e.Deleting():
				n += "(deleting)"
			case e.Spec.Active:
				n += "(active)"
			}
			names = append(names, n)
		}
		miss("%d engine CRs: %v", len(s.engines), names)
	}
	if s.version.HasVolumeAttachments() && !s.csiSatisfiedOn(node) {
		miss("csi-attacher ticket of %s not satisfied", node)
	}
	v.ok = len(v.missing) == 0 && v.bad == nil
	return v
}

// summary describes a verified volume in one line.
func (v verdict) summary(s *snapshot, node string) string {
	return fmt.Sprintf("engine %s active and running on %s, %d/%d replicas active", v.engine, node, len(s.replicas), len(s.replicas))
}
