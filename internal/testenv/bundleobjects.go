package testenv

import (
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// JSON-shaped Longhorn objects as the API server returns them, for bundles
// and files written by the tests. The #6642 volume is the stuck-confirm
// state (docs/troubleshooting-two-active-engines.md) on node-b; empty strings are kept empty so the
// writer's "null" rewriting has something to rewrite.

// BundleNamespace and BundleImage of the fixtures.
const (
	BundleNamespace = "longhorn-system"
	BundleImage     = "longhornio/longhorn-engine:v1.4.3"
)

// BundleCreated is the fixtures' bundle time; objects are two days older.
var BundleCreated = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// JSONMeta is an object's metadata, created two days before BundleCreated.
func JSONMeta(ns, name string, labels map[string]any) map[string]any {
	md := map[string]any{
		"name": name, "namespace": ns, "uid": "uid-" + name, "resourceVersion": "100",
		"creationTimestamp": BundleCreated.Add(-48 * time.Hour).Format(time.RFC3339),
	}
	if labels != nil {
		md["labels"] = labels
	}
	return md
}

// JSONSetting is a longhorn.io Setting.
func JSONSetting(ns, name, value string) map[string]any {
	return map[string]any{"apiVersion": longhorn.APIVersion, "kind": "Setting", "metadata": JSONMeta(ns, name, nil), "value": value}
}

// JSONVolume is a migratable RWX volume attached, healthy, on node.
func JSONVolume(ns, name, node string) map[string]any {
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Volume",
		"metadata": JSONMeta(ns, name, map[string]any{longhorn.VolumeLabel: name}),
		"spec": map[string]any{"nodeID": node, "migrationNodeID": "", "migratable": true, "accessMode": "rwx",
			"engineImage": BundleImage, "numberOfReplicas": 1, "frontend": "blockdev", "lastAttachedBy": "", "Standby": false},
		"status": map[string]any{"ownerID": node, "state": "attached", "robustness": "healthy", "currentNodeID": node,
			"currentImage": BundleImage, "pendingNodeID": "", "conditions": nil, "kubernetesStatus": map[string]any{"namespace": "", "pvName": ""}},
	}
}

// JSONEngine is a running engine of vol on node with one RW replica.
func JSONEngine(ns, vol, name, node string, active bool, replica string) map[string]any {
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Engine",
		"metadata": JSONMeta(ns, name, map[string]any{longhorn.VolumeLabel: vol, "longhornnode": node}),
		"spec": map[string]any{"volumeName": vol, "volumeSize": "1073741824", "nodeID": node, "active": active,
			"desireState": "running", "engineImage": BundleImage, "frontend": "blockdev", "replicaAddressMap": map[string]any{replica: "10.0.0.1:10000"}},
		"status": map[string]any{"ownerID": node, "currentState": "running", "instanceManagerName": "instance-manager-e-" + node,
			"endpoint": "/dev/longhorn/" + vol, "currentImage": BundleImage, "ip": "10.0.0.1", "port": 10001, "started": true,
			"replicaModeMap": map[string]any{replica: "RW"}, "snapshots": map[string]any{"volume-head": map[string]any{"name": "volume-head"}},
			"lastRestoredBackup": "", "conditions": nil},
	}
}

// JSONReplica is a running replica of vol serving engine.
func JSONReplica(ns, vol, name, node, engine string, active bool) map[string]any {
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Replica",
		"metadata": JSONMeta(ns, name, map[string]any{longhorn.VolumeLabel: vol}),
		"spec": map[string]any{"volumeName": vol, "nodeID": node, "engineName": engine, "active": active, "desireState": "running",
			"dataDirectoryName": vol + "-0a1b2c3d", "diskID": "disk-1", "healthyAt": "", "failedAt": ""},
		"status": map[string]any{"ownerID": node, "currentState": "running", "instanceManagerName": "instance-manager-r-" + node},
	}
}

// JSONEngineIM is a 1.4-style engine instance manager on node running engines.
func JSONEngineIM(ns, node string, engines ...string) map[string]any {
	inst := map[string]any{}
	for _, e := range engines {
		inst[e] = map[string]any{"spec": map[string]any{"name": e}, "status": map[string]any{"state": "running"}}
	}
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "InstanceManager",
		"metadata": JSONMeta(ns, "instance-manager-e-"+node, nil),
		"spec":     map[string]any{"nodeID": node, "type": "engine", "image": "longhornio/longhorn-instance-manager:v1.4.3"},
		"status":   map[string]any{"currentState": "running", "instances": inst},
	}
}

// JSONNode is a Ready Longhorn node.
func JSONNode(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Node", "metadata": JSONMeta(ns, name, nil),
		"spec":   map[string]any{"name": name, "allowScheduling": true, "evictionRequested": false, "tags": []any{}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "", "message": ""}}},
	}
}

// BundleScenario is a namespace with: pvc-stuck in the #6642 state (engines on
// node-a and node-b, both active), pvc-ok healthy on node-a, pvc-logonly
// healthy on node-b (its BUG lines are in the logs only).
func BundleScenario(ns, version string) []map[string]any {
	return []map[string]any{
		JSONSetting(ns, longhorn.VersionSetting, version),
		JSONSetting(ns, "storage-minimal-available-percentage", "25"),
		JSONVolume(ns, "pvc-stuck", "node-b"),
		JSONVolume(ns, "pvc-ok", "node-a"),
		JSONVolume(ns, "pvc-logonly", "node-b"),
		JSONEngine(ns, "pvc-stuck", "pvc-stuck-e-aaaa1111", "node-a", true, "pvc-stuck-r-a"),
		JSONEngine(ns, "pvc-stuck", "pvc-stuck-e-bbbb2222", "node-b", true, "pvc-stuck-r-b"),
		JSONEngine(ns, "pvc-ok", "pvc-ok-e-cccc3333", "node-a", true, "pvc-ok-r-a"),
		JSONEngine(ns, "pvc-logonly", "pvc-logonly-e-dddd4444", "node-b", true, "pvc-logonly-r-b"),
		JSONReplica(ns, "pvc-stuck", "pvc-stuck-r-a", "node-a", "pvc-stuck-e-aaaa1111", true),
		JSONReplica(ns, "pvc-stuck", "pvc-stuck-r-b", "node-a", "pvc-stuck-e-bbbb2222", false),
		JSONReplica(ns, "pvc-ok", "pvc-ok-r-a", "node-a", "pvc-ok-e-cccc3333", true),
		JSONReplica(ns, "pvc-logonly", "pvc-logonly-r-b", "node-b", "pvc-logonly-e-dddd4444", true),
		JSONEngineIM(ns, "node-a", "pvc-stuck-e-aaaa1111", "pvc-ok-e-cccc3333"),
		JSONEngineIM(ns, "node-b", "pvc-stuck-e-bbbb2222", "pvc-logonly-e-dddd4444"),
		JSONNode(ns, "node-a"),
		JSONNode(ns, "node-b"),
	}
}

// BugLinesAt is when the fixtures' BUG lines start.
var BugLinesAt = BundleCreated.Add(-3 * time.Hour)

// ManagerLogs: BUG lines for pvc-stuck on node-b's manager (and its
// previous container), for pvc-logonly earlier, filler around them.
func ManagerLogs(ns string, filler int) map[string]string {
	var b strings.Builder
	for i := 0; i < filler; i++ {
		b.WriteString(InfoLine(BugLinesAt.Add(-time.Hour), i) + "\n")
	}
	b.WriteString(BugLine(Style143, BugLinesAt, ns, "pvc-stuck", "pvc-stuck-e-bbbb2222", "pvc-stuck-e-aaaa1111", "node-b") + "\n")
	b.WriteString(BugLine(Style143, BugLinesAt.Add(time.Hour), ns, "pvc-stuck", "pvc-stuck-e-bbbb2222", "pvc-stuck-e-aaaa1111", "node-b") + "\n")
	b.WriteString(BugLine(Style143, BugLinesAt.Add(-2*time.Hour), ns, "pvc-logonly", "pvc-logonly-e-eeee5555", "pvc-logonly-e-dddd4444", "node-b") + "\n")
	return map[string]string{
		ns + "/longhorn-manager-bbbbb/longhorn-manager.log":   b.String(),
		ns + "/longhorn-manager-bbbbb/longhorn-manager.log.1": BugLine(Style143, BugLinesAt.Add(-time.Minute), ns, "pvc-stuck", "pvc-stuck-e-bbbb2222", "pvc-stuck-e-aaaa1111", "node-b") + "\n",
		ns + "/longhorn-manager-aaaaa/longhorn-manager.log":   InfoLine(BugLinesAt, 1) + "\n",
		// not a manager: never scanned
		ns + "/longhorn-ui-12345/longhorn-ui.log": BugLine(Style143, BugLinesAt, ns, "pvc-ok", "x-e-1", "x-e-0", "n") + "\n",
	}
}
