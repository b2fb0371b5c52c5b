package detect

import (
	"sort"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// ReplicaChange is one replica write of a repair.
type ReplicaChange struct {
	Replica    string `json:"replica"`
	FromEngine string `json:"fromEngine"`
	ToEngine   string `json:"toEngine"`
	FromActive bool   `json:"fromActive"`
	ToActive   bool   `json:"toActive"`
}

// repointChanges points every active replica of an engine that no longer
// exists at the remaining engine (longhorn#1988). The survivor's inactive
// replicas are left alone: Longhorn may be deleting them right now, and
// activating a replica while it is deleted would wipe its directory.
//
// A dangling replica whose data directory an active replica of the survivor
// already uses (a clone activated before the stale engine was deleted) is
// deactivated instead, first: repointed, it would give the survivor two
// replicas writing one directory, and Longhorn's clean-up of extra healthy
// replicas could delete one of the two active CRs and wipe it. Inactive,
// Longhorn deletes it and keeps the directory, which the survivor's replica
// still uses.
func repointChanges(keep string, replicas []*longhorn.Replica, engines map[string]bool) []ReplicaChange {
	used := map[string]bool{}
	for _, r := range replicas {
		if r.Spec.EngineName == keep && r.Spec.Active && r.DeletionTimestamp == nil {
			used[dirKey(r)] = true
		}
	}
	var off, repoint []ReplicaChange
	for _, r := range sortedReplicas(replicas) {
		if !dangling(r, engines) {
			continue
		}
		if used[dirKey(r)] {
			off = append(off, ReplicaChange{Replica: r.Name, FromEngine: r.Spec.EngineName, ToEngine: r.Spec.EngineName, FromActive: true})
			continue
		}
		repoint = append(repoint, ReplicaChange{Replica: r.Name, FromEngine: r.Spec.EngineName, ToEngine: keep, FromActive: true, ToActive: true})
	}
	return append(off, repoint...)
}

// dangling: an active replica naming an engine the volume does not have.
func dangling(r *longhorn.Replica, engines map[string]bool) bool {
	return r.Spec.Active && r.Spec.EngineName != "" && !engines[r.Spec.EngineName]
}

// danglingOf names the replicas dangling against engines, and the engines
// they name, in order.
func danglingOf(replicas []*longhorn.Replica, engines map[string]bool) (names, gone []string) {
	seen := map[string]bool{}
	for _, r := range sortedReplicas(replicas) {
		if dangling(r, engines) {
			names = append(names, r.Name)
			if !seen[r.Spec.EngineName] {
				seen[r.Spec.EngineName] = true
				gone = append(gone, r.Spec.EngineName)
			}
		}
	}
	return names, gone
}

func sortedReplicas(rs []*longhorn.Replica) []*longhorn.Replica {
	out := append([]*longhorn.Replica(nil), rs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// survivorRW counts the replicas of keep that its replicaModeMap reports
// RW. Longhorn recomputes the volume's robustness from exactly these in the
// sync that follows the repair (ReconcileEngineReplicaState runs before
// processMigration), so this, not the frozen status.robustness, decides
// whether the confirm branch runs.
func survivorRW(keep *longhorn.Engine, replicas []*longhorn.Replica) int {
	n := 0
	for _, r := range replicas {
		if r.Spec.EngineName == keep.Name && keep.Status.ReplicaModeMap[r.Name] == longhorn.ModeRW {
			n++
		}
	}
	return n
}
