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

// flipChanges makes the flags what Longhorn's own confirm would have left:
// the survivor's replicas active, every other engine's replicas inactive.
// Activations come first, so the volume never has no active replica. While
// two engines are active every sync stops at the BUG error before any
// clean-up, so these writes are inert until the stale engine is deactivated;
// afterwards every Longhorn path that deletes replicas of other engines
// (the confirm's clean-up, a migration revert) finds them inactive, and
// deleting an inactive replica keeps its data directory.
func flipChanges(keep string, replicas []*longhorn.Replica) []ReplicaChange {
	var on, off []ReplicaChange
	for _, r := range sortedReplicas(replicas) {
		switch {
		case r.Spec.EngineName == keep && !r.Spec.Active:
			on = append(on, ReplicaChange{Replica: r.Name, FromEngine: keep, ToEngine: keep, ToActive: true})
		case r.Spec.EngineName != keep && r.Spec.Active:
			off = append(off, ReplicaChange{Replica: r.Name, FromEngine: r.Spec.EngineName, ToEngine: r.Spec.EngineName, FromActive: true})
		}
	}
	return append(on, off...)
}

// repointChanges points every active replica of an engine that no longer
// exists at the remaining engine (longhorn#1988). The survivor's inactive
// replicas are left alone: Longhorn may be deleting them right now, and
// activating a replica while it is deleted would wipe its directory.
func repointChanges(keep string, replicas []*longhorn.Replica, engines map[string]bool) []ReplicaChange {
	var out []ReplicaChange
	for _, r := range sortedReplicas(replicas) {
		if dangling(r, engines) {
			out = append(out, ReplicaChange{Replica: r.Name, FromEngine: r.Spec.EngineName, ToEngine: keep, FromActive: true, ToActive: true})
		}
	}
	return out
}

// dangling: an active replica naming an engine the volume does not have.
func dangling(r *longhorn.Replica, engines map[string]bool) bool {
	return r.Spec.Active && r.Spec.EngineName != "" && !engines[r.Spec.EngineName]
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
