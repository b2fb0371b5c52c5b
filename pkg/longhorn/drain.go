package longhorn

import "strings"

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
	if len(im.Status.InstanceReplicas) > 0 {
		return SortedKeys(im.Status.InstanceReplicas)
	}
	if im.Spec.Type == "engine" {
		return nil
	}
	var out []string
	for _, n := range SortedKeys(im.Status.Instances) {
		if strings.Contains(n, "-r-") {
			out = append(out, n)
		}
	}
	return out
}
