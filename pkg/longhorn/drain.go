package longhorn

import (
	"encoding/json"
	"strings"
)

// PDB is the part of a policy/v1 PodDisruptionBudget the drain view reads:
// Longhorn keeps one per instance manager, named like it, while the
// manager runs processes a drain must not stop (longhorn#6552).
type PDB struct {
	Namespace string
	Name      string
	// MinAvailable is spec.minAvailable as written ("1"), "" when unset.
	MinAvailable string
	// DisruptionsAllowed is status.disruptionsAllowed: 0 refuses an
	// eviction, so the drain waits.
	DisruptionsAllowed int
	// MatchLabels is spec.selector.matchLabels.
	MatchLabels map[string]string
}

// Holds reports a budget that refuses every eviction now.
func (p *PDB) Holds() bool { return p.DisruptionsAllowed <= 0 }

// ReplicaProcessNames lists replica process names in any version's field.
func (im *InstanceManager) ReplicaProcessNames() []string {
	return im.processNames(im.Status.InstanceReplicas, "engine", "-r-")
}

// EngineProcessNames lists engine process names in any version's field.
func (im *InstanceManager) EngineProcessNames() []string {
	return im.processNames(im.Status.InstanceEngines, "replica", "-e-")
}

// processNames reads the per-kind field (1.5+) when set; otherwise, unless
// the manager is of the other kind (other), the names in the older
// all-kinds field that carry the kind's infix (-e- or -r-). ≤1.4 aio
// managers do not exist; engine managers list only engines, but the name
// check keeps the other kind's processes out either way.
func (im *InstanceManager) processNames(ofKind map[string]json.RawMessage, other, infix string) []string {
	if len(ofKind) > 0 {
		return SortedKeys(ofKind)
	}
	if im.Spec.Type == other {
		return nil
	}
	var out []string
	for _, n := range SortedKeys(im.Status.Instances) {
		if strings.Contains(n, infix) {
			out = append(out, n)
		}
	}
	return out
}
