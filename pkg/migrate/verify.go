package migrate

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
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
	case detect.TypeMultipleActiveEngines, detect.TypeInvertedReplicaFlags, detect.TypeConfirmWithoutEngine, detect.TypeEnginesOnOneNode,
		detect.TypeEngineOffNode, detect.TypeSharedReplicaDirectory:
		return true
	}
	return false
}

// checkVerified: the volume is settled on node (detect.Settled), and no
// state waiting does not resolve (badAfterConfirm) is seen.
func checkVerified(s *snapshot, ns, node string) verdict {
	var v verdict
	if f, ok := s.classify(ns); ok && badAfterConfirm(f.Type) {
		v.bad = &f
	}
	v.engine, v.missing = detect.Settled(s.state(ns), s.volume.Name, node)
	v.ok = len(v.missing) == 0 && v.bad == nil
	return v
}

// summary describes a verified volume in one line.
func (v verdict) summary(s *snapshot, node string) string {
	return fmt.Sprintf("engine %s active and running on %s, %d/%d replicas active", v.engine, node, len(s.replicas), len(s.replicas))
}
