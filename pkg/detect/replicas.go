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
// A dangling replica whose data directory a replica that stays active
// already uses is deactivated instead, first: repointed, it would give the
// survivor two replicas writing one directory, and Longhorn's next deletion
// of either CR (clean-up of extra healthy or failed replicas, auto-balance)
// wipes the directory the other serves. That covers an active replica of
// the survivor (a clone activated before the stale engine was deleted),
// another dangling replica of the directory (the one repointed: not failed
// first, then by name), and two active replicas of the survivor itself on
// one directory (sharedDirChanges; explorer seed 45 states 2248 and 2727 on
// 1.4.3, where Longhorn alone wiped the directory too). Inactive, Longhorn
// deletes them and keeps the directory, which the replica left active uses.
// No dangling replica, no changes: the volume is another row.
func repointChanges(keep *longhorn.Engine, replicas []*longhorn.Replica, engines map[string]bool) []ReplicaChange {
	var stale []*longhorn.Replica
	for _, r := range sortedReplicas(replicas) {
		if dangling(r, engines) {
			stale = append(stale, r)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	off := sharedDirChanges(keep, dirMates(keep.Name, replicas, func(r *longhorn.Replica) bool { return r.Spec.Active }))
	used := servedDirs(keep.Name, replicas)
	sort.SliceStable(stale, func(i, j int) bool { return stale[i].Spec.FailedAt == "" && stale[j].Spec.FailedAt != "" })
	var repoint []ReplicaChange
	for _, r := range stale {
		if used[dirKey(r)] {
			off = append(off, ReplicaChange{Replica: r.Name, FromEngine: r.Spec.EngineName, ToEngine: r.Spec.EngineName, FromActive: true})
			continue
		}
		used[dirKey(r)] = true
		repoint = append(repoint, ReplicaChange{Replica: r.Name, FromEngine: r.Spec.EngineName, ToEngine: keep.Name, FromActive: true, ToActive: true})
	}
	return append(off, repoint...)
}

// servedDirs is the set of data directories engine's active replicas
// that are not being deleted use.
func servedDirs(engine string, replicas []*longhorn.Replica) map[string]bool {
	dirs := map[string]bool{}
	for _, r := range replicas {
		if r.Spec.EngineName == engine && r.Spec.Active && r.DeletionTimestamp == nil {
			dirs[dirKey(r)] = true
		}
	}
	return dirs
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
