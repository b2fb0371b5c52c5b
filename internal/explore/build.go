package explore

import (
	"fmt"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// OldImage is the engine image of a state with OldImage set; the world
// deploys it beside the release's default one.
const OldImage = "longhornio/longhorn-engine:old"

// Images are what a built state runs: the release's default engine image
// (the simulator's) and the old one.
type Images struct {
	Default string
}

// Built is a state as objects: the typed ones of internal/testenv's
// builders, and what the world deletes after creating them.
type Built struct {
	Volume          string
	Objects         *testenv.Objects
	DeletingReplica []string
	// GeneratedDeleted are replicas the state has deleting from the start:
	// their deletion is not the controllers' doing.
	GeneratedDeleted map[string]bool
}

// engineName is engine i of vol; i = -1 is the vanished engine.
func engineName(release, vol string, i int) string {
	if i < 0 {
		return testenv.EngineName(release, vol, 9)
	}
	return testenv.EngineName(release, vol, i)
}

// Build makes vol's objects from s with internal/testenv's builders.
func Build(s State, vol string, img Images) *Built {
	ver := longhorn.MustParseVersion(s.Release)
	cur := img.Default
	if s.OldImage {
		cur = OldImage
	}
	v := testenv.NewVolume(vol, s.NodeID)
	v.Spec.MigrationNodeID = s.MigrationNodeID
	v.Spec.NumberOfReplicas = countDirs(s)
	v.Spec.EngineImage, v.Spec.Image = "", ""
	if s.RWO {
		v.Spec.Migratable, v.Spec.AccessMode = false, longhorn.AccessModeRWO
	}
	v.Status.OwnerID = s.CurrentNodeID
	if v.Status.OwnerID == "" {
		v.Status.OwnerID = testenv.NodeA
	}
	v.Status.CurrentNodeID = s.CurrentNodeID
	v.Status.CurrentMigrationNodeID = s.CurrentMigrationNodeID
	v.Status.PendingNodeID = s.PendingNodeID
	v.Status.State = s.VolumeState
	v.Status.Robustness = s.Robustness
	v.Status.CurrentImage = cur

	o := &testenv.Objects{Volumes: []*longhorn.Volume{v}}
	b := &Built{Volume: vol, Objects: o, GeneratedDeleted: map[string]bool{}}
	repNames := make([]string, len(s.Replicas))
	byEngine := map[int][]string{}
	seen := map[int]int{}
	for i, r := range s.Replicas {
		// the first replica of a directory is its original, the others clones
		clone := seen[r.Dir] > 0
		repNames[i] = testenv.ReplicaName(vol, i, clone)
		seen[r.Dir]++
		byEngine[r.Engine] = append(byEngine[r.Engine], repNames[i])
	}
	for i, es := range s.Engines {
		e := testenv.NewEngine(engineName(s.Release, vol, i), vol, es.Node, es.Active, byEngine[i]...)
		e.Spec.EngineImage = ""
		e.Status.CurrentImage = cur
		e.Status.CurrentState = es.State
		if es.State != longhorn.StateRunning {
			e.Status.Endpoint, e.Status.ReplicaModeMap = "", map[string]string{}
		}
		if es.Node == "" || es.State == longhorn.StateStopped {
			e.Spec.DesireState = longhorn.StateStopped
		}
		if es.Node == "" {
			e.Status.OwnerID = testenv.NodeA
		}
		o.Engines = append(o.Engines, e)
		if es.Deleting {
			o.Deleting = append(o.Deleting, e.Name)
		}
	}
	diskPath := ""
	for i, r := range s.Replicas {
		dir := vol + "-d" + string(rune('0'+r.Dir))
		rep := testenv.NewReplica(repNames[i], vol, r.Node, engineName(s.Release, vol, r.Engine), r.Active, dir)
		rep.Spec.DiskID, diskPath = lhsim.DiskOf(r.Node)
		rep.Spec.DiskPath = diskPath
		if !r.Healthy {
			rep.Spec.HealthyAt = ""
		}
		if r.Failed {
			rep.Spec.FailedAt = "2026-01-01T00:01:00Z"
			rep.Spec.DesireState = longhorn.StateStopped
			rep.Status.CurrentState = longhorn.StateStopped
		}
		o.Replicas = append(o.Replicas, rep)
		if r.Deleting {
			b.DeletingReplica = append(b.DeletingReplica, rep.Name)
			b.GeneratedDeleted[rep.Name] = true
		}
	}
	// the engines name their replicas by the addresses those have (Overlay)
	for _, e := range o.Engines {
		for _, rep := range o.Replicas {
			if _, ok := e.Spec.ReplicaAddressMap[rep.Name]; ok && rep.Status.CurrentState == longhorn.StateRunning && rep.Spec.NodeID != "" {
				ip, port := lhsim.InstanceAddress(rep.Spec.NodeID, rep.Name)
				e.Spec.ReplicaAddressMap[rep.Name] = fmt.Sprintf("tcp://%s:%d", ip, port)
			}
		}
	}
	if ver.HasVolumeAttachments() {
		o.VAs = []*longhorn.VolumeAttachment{testenv.NewVA(vol, uniq(s.Tickets)...)}
	}
	return b
}

// Overlay adds to an object of a built state what Longhorn's API, webhooks
// and the release's field names give it on a cluster: the volume spec
// defaults, the image and data-engine fields, dataLocality and
// replicaAutoBalance, and the finalizer on replicas.
func Overlay(s State, kind string, u *unstructured.Unstructured, img Images) {
	ver := longhorn.MustParseVersion(s.Release)
	cur := img.Default
	if s.OldImage {
		cur = OldImage
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	switch kind {
	case longhorn.Volumes.Kind:
		d := lhsim.VolumeSpecDefaults(ver)
		maps.Copy(d, spec)
		spec = d
		want := cur
		if s.UpgradePicked() {
			want = img.Default
		}
		lhsim.SetEngineFields(ver, spec, want, "")
		if s.BestEffort {
			spec["dataLocality"] = "best-effort"
		}
		if s.AutoBalance {
			spec["replicaAutoBalance"] = "best-effort"
		}
		for _, f := range []string{"nodeID", "migrationNodeID"} {
			if _, ok := spec[f]; !ok {
				spec[f] = ""
			}
		}
	case longhorn.Engines.Kind:
		lhsim.SetEngineFields(ver, spec, cur, "")
		spec["volumeSize"] = "1073741824"
		if _, ok := spec["nodeID"]; !ok {
			spec["nodeID"] = ""
		}
		spec["upgradedReplicaAddressMap"] = map[string]any{}
	case longhorn.VolumeAttachments.Kind:
		// newer CRDs (1.10) require every ticket status to carry its
		// conditions, which the controller writes
		sts, _, _ := unstructured.NestedMap(u.Object, "status", "attachmentTicketStatuses")
		for id, st := range sts {
			if m, ok := st.(map[string]any); ok {
				if _, has := m["conditions"]; !has {
					m["conditions"] = []any{}
				}
				sts[id] = m
			}
		}
		if sts != nil {
			_ = unstructured.SetNestedMap(u.Object, sts, "status", "attachmentTicketStatuses")
		}
	case longhorn.Replicas.Kind:
		lhsim.SetEngineFields(ver, spec, cur, "")
		spec["volumeSize"] = "1073741824"
		spec["rebuildRetryCount"] = int64(0)
		u.SetFinalizers([]string{longhorn.Finalizer})
		// A running replica has an address on a cluster. Without one
		// Longhorn skips it ("BUG: replica is running but IP is empty")
		// until lhsim's first sync of it, and what a volume controller
		// does in that window is an artifact (seed 27 state 54 on 1.4.3:
		// the confirm's new engine lost its one replica).
		state, _, _ := unstructured.NestedString(u.Object, "status", "currentState")
		node, _, _ := unstructured.NestedString(spec, "nodeID")
		if state == longhorn.StateRunning && node != "" {
			ip, port := lhsim.InstanceAddress(node, u.GetName())
			st, _, _ := unstructured.NestedMap(u.Object, "status")
			st["ip"], st["storageIP"], st["port"], st["started"] = ip, ip, port, true
			_ = unstructured.SetNestedMap(u.Object, st, "status")
		}
	}
	u.Object["spec"] = spec
}

func countDirs(s State) int {
	dirs := map[int]bool{}
	for _, r := range s.Replicas {
		dirs[r.Dir] = true
	}
	if len(dirs) == 0 {
		return 1
	}
	return len(dirs)
}

func uniq(l []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range l {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
