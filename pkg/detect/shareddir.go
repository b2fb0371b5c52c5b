package detect

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Two replicas of one engine on one data directory. Deleting an active
// replica removes its directory (replica_controller.go, every release from
// 1.4 to 1.12), so while both are active, Longhorn's next deletion of
// either one (the clean-up of replicas beyond spec.numberOfReplicas under
// data locality or replica auto-balance, an eviction) wipes the data the
// other serves. Longhorn never creates such a pair: it is left by a
// confirm or rollback finished while a clone and its original both named
// the engine kept, since the finish sets every healthy replica of that
// engine active (switchActiveReplicas). Explorer, seed 27: 1.4.3 (state 22)
// and 1.5.3 (state 77) ended so; 1.10.0, 1.11.1 and 1.12.0 (state 22,
// data locality best-effort) went on to wipe the directory, and so did
// 1.4.3, 1.5.3 and 1.12.0 from the end state under best-effort
// (explore/testdata/*-shared-dir-best-effort.json).

// dirMates groups the replicas of engine that are not being deleted and
// pass keep by data directory, and returns the groups of two or more, in
// replica order.
func dirMates(engine string, replicas []*longhorn.Replica, keep func(*longhorn.Replica) bool) [][]*longhorn.Replica {
	byDir := map[string][]*longhorn.Replica{}
	var order []string
	for _, r := range sortedReplicas(replicas) {
		if r.Spec.EngineName != engine || r.DeletionTimestamp != nil || r.Spec.DataDirectoryName == "" || !keep(r) {
			continue
		}
		k := dirKey(r)
		if len(byDir[k]) == 1 {
			order = append(order, k)
		}
		byDir[k] = append(byDir[k], r)
	}
	groups := make([][]*longhorn.Replica, 0, len(order))
	for _, k := range order {
		groups = append(groups, byDir[k])
	}
	return groups
}

// sharedDirChanges deactivates all but one replica of each group of
// engine's active replicas on one data directory: the one the engine
// reports in RW mode stays (otherwise the first not failed, or the first). Inactive, Longhorn's
// clean-up of leftover replicas deletes the others and keeps the
// directory, which the replica left active still uses (the same write as
// DanglingReplicas' "off").
func sharedDirChanges(engine *longhorn.Engine, groups [][]*longhorn.Replica) []ReplicaChange {
	var out []ReplicaChange
	for _, g := range groups {
		stay := g[0]
		for _, r := range g {
			if r.Spec.FailedAt == "" {
				stay = r
				break
			}
		}
		for _, r := range g {
			if engine.Status.ReplicaModeMap[r.Name] == longhorn.ModeRW {
				stay = r
				break
			}
		}
		for _, r := range g {
			if r != stay {
				out = append(out, ReplicaChange{Replica: r.Name, FromEngine: engine.Name, ToEngine: engine.Name, FromActive: true})
			}
		}
	}
	return out
}

// groupNames lists each group as "a and b", groups joined by "; ".
func groupNames(groups [][]*longhorn.Replica) string {
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		names := make([]string, 0, len(g))
		for _, r := range g {
			names = append(names, r.Name)
		}
		parts = append(parts, strings.Join(names, " and "))
	}
	return strings.Join(parts, "; ")
}

// sharedDirectory is the row of a volume whose one engine has two active
// replicas on one data directory; it reports whether it is one.
func sharedDirectory(st *longhorn.State, v *longhorn.Volume, e *longhorn.Engine, replicas []*longhorn.Replica, f *Finding) bool {
	groups := dirMates(e.Name, replicas, func(r *longhorn.Replica) bool { return r.Spec.Active })
	if len(groups) == 0 {
		return false
	}
	f.Type, f.Severity = TypeSharedReplicaDirectory, SeverityCritical
	f.Keep = e.Name
	markRoles(f, e.Name, nil)
	f.Reason = fmt.Sprintf("active replicas %s of engine %s share one data directory: deleting an active replica removes its directory, so when Longhorn next deletes one of them (the clean-up of replicas beyond spec.numberOfReplicas under data locality or replica auto-balance, an eviction) the other loses its data; never delete either replica",
		groupNames(groups), e.Name)

	var cs checks
	cs.versionKnown(st)
	cs.noMigrationRequested(v, "")
	cs.noMigrationInFlight(v)
	cs.noAttachPending(v)
	cs.noUpgrade(v)
	f.Preconditions = cs

	if why := repairBlocked(st.Version, v); why != "" {
		f.Reason += "; " + why
		return true
	}
	if failed := firstFailed(cs); failed != nil {
		f.Reason += "; not safe to repair because " + failed.Failure + "; run scan again once it has passed"
		return true
	}
	f.Action = ActionSetReplicas
	f.ReplicaChanges = sharedDirChanges(e, groups)
	f.Reason += fmt.Sprintf("; fix sets spec.active=false on %s (Longhorn then removes them and keeps the directory, which the replica left active uses), each write pinned by uid and resourceVersion",
		strings.Join(f.ChangedReplicas(), ", "))
	return true
}

// sharedDirOnceFinished warns of a confirm or rollback being finished
// whose engine kept, the one on spec.nodeID, has two healthy replicas on
// one data directory: the finish sets both active, the state above, and
// Longhorn 1.10.0, 1.11.1 and 1.12.0 wiped the directory from there
// (explorer seed 27 state 22, known entry E11 until then).
func sharedDirOnceFinished(v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, f *Finding) {
	if f.Severity != SeverityInfo || v.Spec.NodeID == "" {
		return
	}
	var keep *longhorn.Engine
	for _, e := range engines {
		if e.Deleting() || e.Spec.NodeID != v.Spec.NodeID {
			continue
		}
		if keep != nil {
			return
		}
		keep = e
	}
	if keep == nil {
		return
	}
	groups := dirMates(keep.Name, replicas, func(r *longhorn.Replica) bool { return r.Spec.HealthyAt != "" })
	if len(groups) == 0 {
		return
	}
	f.Severity, f.Action = SeverityWarning, ActionNone
	f.Reason = fmt.Sprintf("replicas %s of engine %s share one data directory, and Longhorn's finish sets every healthy replica of %s active: deleting an active replica removes its directory, which the other uses, and Longhorn deletes one whenever the volume has more replicas than it asks for (Longhorn 1.10 to 1.12 did, under data locality best-effort); never delete either replica, and run scan again once the finish is done: fix then deactivates the extra one (%s, docs/troubleshooting-two-active-engines.md) (%s)",
		groupNames(groups), keep.Name, keep.Name, TypeSharedReplicaDirectory, f.Reason)
}
