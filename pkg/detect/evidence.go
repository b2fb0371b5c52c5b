package detect

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func evidence(st *longhorn.State, v *longhorn.Volume, engines []*longhorn.Engine, replicas []*longhorn.Replica, va *longhorn.VolumeAttachment) Evidence {
	ev := Evidence{
		VolumeState:            v.Status.State,
		Robustness:             v.Status.Robustness,
		NodeID:                 v.Spec.NodeID,
		CurrentNodeID:          v.Status.CurrentNodeID,
		MigrationNodeID:        v.Spec.MigrationNodeID,
		CurrentMigrationNodeID: v.Status.CurrentMigrationNodeID,
		CurrentEngineNodeID:    v.Status.CurrentEngineNodeID,
		EngineNodeID:           v.Spec.EngineNodeID,
		SwitchoverState:        v.Status.SwitchoverState,
		OwnerID:                v.Status.OwnerID,
		DataEngine:             v.DataEngineName(),
		Migratable:             v.Spec.Migratable,
		AccessMode:             v.Spec.AccessMode,
		Engines:                make([]EngineEvidence, 0, len(engines)),
		Replicas:               make([]ReplicaEvidence, 0, len(replicas)),
	}
	for _, e := range engines {
		ee := EngineEvidence{
			Name:            e.Name,
			NodeID:          e.Spec.NodeID,
			Active:          e.Spec.Active,
			State:           e.Status.CurrentState,
			DesireState:     e.Spec.DesireState,
			Endpoint:        e.Status.Endpoint,
			RWReplicas:      e.RWCount(),
			InstanceManager: e.Status.InstanceManagerName,
			Image:           e.ImageName(),
			OwnerID:         e.Status.OwnerID,
			Created:         e.CreationTimestamp.Time.UTC(),
		}
		if e.DataEngineName() == longhorn.DataEngineV2 || v.DataEngineName() == longhorn.DataEngineV2 {
			ee.Address = address(e.Status.IP, e.Status.Port)
		}
		if e.DeletionTimestamp != nil {
			t := e.DeletionTimestamp.Time.UTC()
			ee.DeletionTimestamp = &t
		}
		ev.Engines = append(ev.Engines, ee)
	}
	for _, r := range replicas {
		ev.Replicas = append(ev.Replicas, ReplicaEvidence{
			Name:          r.Name,
			NodeID:        r.Spec.NodeID,
			EngineName:    r.Spec.EngineName,
			Active:        r.Spec.Active,
			State:         r.Status.CurrentState,
			DataDirectory: r.Spec.DataDirectoryName,
		})
	}
	if ks := &v.Status.KubernetesStatus; ks.PVName != "" || ks.PVCName != "" || len(ks.WorkloadsStatus) > 0 {
		k := &KubernetesEvidence{PVName: ks.PVName, Namespace: ks.Namespace, PVCName: ks.PVCName}
		for _, w := range ks.WorkloadsStatus {
			k.Workloads = append(k.Workloads, WorkloadEvidence{PodName: w.PodName, WorkloadName: w.WorkloadName, WorkloadType: w.WorkloadType})
		}
		ev.Kubernetes = k
	}
	ev.Workload = placement(&st.Workloads, v)
	if va != nil {
		for _, id := range longhorn.SortedKeys(va.Spec.AttachmentTickets) {
			t := va.Spec.AttachmentTickets[id]
			ev.Tickets = append(ev.Tickets, TicketEvidence{ID: id, Type: t.Type, NodeID: t.NodeID, Satisfied: va.Satisfied(id)})
		}
	}
	return ev
}

// markRoles labels the engines in the evidence.
func markRoles(f *Finding, keep string, stale []string) {
	for i := range f.Evidence.Engines {
		setRole(&f.Evidence.Engines[i].Role, f.Evidence.Engines[i].Name, keep, stale)
	}
}

// setRole marks the object called name "keep" or "stale", and leaves any
// other role as it is.
func setRole(role *string, name, keep string, stale []string) {
	switch {
	case name == keep && keep != "":
		*role = "keep"
	case slices.Contains(stale, name):
		*role = "stale"
	}
}

// markMigration labels the engine on (or heading to) the migration target.
func markMigration(f *Finding, target string) {
	for i := range f.Evidence.Engines {
		e := &f.Evidence.Engines[i]
		if !e.Active && (e.NodeID == target || e.NodeID == "") {
			e.Role = "migration"
		}
	}
}

// orphans reports engines whose volume is gone and engine processes that no
// Engine CR accounts for.
func orphans(st *longhorn.State, idx *index) []Finding {
	var out []Finding
	known := make(map[string]bool, len(st.Engines))
	for i := range st.Engines {
		known[st.Engines[i].Name] = true
	}
	for vol, es := range idx.engines {
		if idx.volumes[vol] {
			continue
		}
		for _, e := range es {
			f := Finding{
				Volume: vol, Type: TypeOrphanEngine, Severity: SeverityWarning, Stale: []string{e.Name}, Action: ActionNone,
				Reason: fmt.Sprintf("engine %s (active=%t, node %q) belongs to volume %q, which does not exist", e.Name, e.Spec.Active, e.Spec.NodeID, vol),
			}
			f.Evidence.Engines = []EngineEvidence{{Name: e.Name, Role: "stale", NodeID: e.Spec.NodeID, Active: e.Spec.Active,
				State: e.Status.CurrentState, InstanceManager: e.Status.InstanceManagerName, Created: e.CreationTimestamp.Time.UTC()}}
			f.Evidence.Replicas = []ReplicaEvidence{}
			out = append(out, f)
		}
	}
	if !st.InstanceManagersRead {
		return out
	}
	// Name order, so that the report does not depend on the order the
	// instance managers were read in.
	ims := make([]*longhorn.InstanceManager, len(st.InstanceManagers))
	for i := range st.InstanceManagers {
		ims[i] = &st.InstanceManagers[i]
	}
	sort.SliceStable(ims, func(i, j int) bool { return ims[i].Name < ims[j].Name })
	for _, im := range ims {
		for _, p := range im.EngineProcessNames() {
			if known[p] {
				continue
			}
			f := Finding{
				Volume: volumeOfEngine(p), Type: TypeOrphanEngineProcess, Severity: SeverityWarning, Stale: []string{p}, Action: ActionNone,
				Reason: fmt.Sprintf("instance manager %s on node %q runs engine process %s that has no Engine CR; it can block draining the node", im.Name, im.Spec.NodeID, p),
			}
			f.Evidence.Engines = []EngineEvidence{{Name: p, Role: "stale", NodeID: im.Spec.NodeID, InstanceManager: im.Name, Created: time.Time{}}}
			f.Evidence.Replicas = []ReplicaEvidence{}
			out = append(out, f)
		}
	}
	return out
}

// volumeOfEngine derives the volume from "<vol>-e-<suffix>".
func volumeOfEngine(name string) string {
	for i := len(name) - 3; i > 0; i-- {
		if name[i:i+3] == "-e-" {
			return name[:i]
		}
	}
	return name
}
