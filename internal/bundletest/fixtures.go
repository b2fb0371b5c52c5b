package bundletest

import (
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// JSON-shaped Longhorn objects as the API server returns them, for bundles
// and files written by the tests. The #6642 volume is the stuck-confirm
// state of domain doc §7 on node-b; empty strings are kept empty so the
// writer's "null" rewriting has something to rewrite.

// Namespace and Image of the fixtures.
const (
	Namespace = "longhorn-system"
	Image     = "longhornio/longhorn-engine:v1.4.3"
)

// Created is the fixtures' bundle time; objects are two days older.
var Created = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// Meta is an object's metadata, created two days before Created.
func Meta(ns, name string, labels map[string]any) map[string]any {
	md := map[string]any{
		"name": name, "namespace": ns, "uid": "uid-" + name, "resourceVersion": "100",
		"creationTimestamp": Created.Add(-48 * time.Hour).Format(time.RFC3339),
	}
	if labels != nil {
		md["labels"] = labels
	}
	return md
}

// Setting is a longhorn.io Setting.
func Setting(ns, name, value string) map[string]any {
	return map[string]any{"apiVersion": longhorn.APIVersion, "kind": "Setting", "metadata": Meta(ns, name, nil), "value": value}
}

// Volume is a migratable RWX volume attached, healthy, on node.
func Volume(ns, name, node string) map[string]any {
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Volume",
		"metadata": Meta(ns, name, map[string]any{longhorn.VolumeLabel: name}),
		"spec": map[string]any{"nodeID": node, "migrationNodeID": "", "migratable": true, "accessMode": "rwx",
			"engineImage": Image, "numberOfReplicas": 1, "frontend": "blockdev", "lastAttachedBy": "", "Standby": false},
		"status": map[string]any{"ownerID": node, "state": "attached", "robustness": "healthy", "currentNodeID": node,
			"currentImage": Image, "pendingNodeID": "", "conditions": nil, "kubernetesStatus": map[string]any{"namespace": "", "pvName": ""}},
	}
}

// Engine is a running engine of vol on node with one RW replica.
func Engine(ns, vol, name, node string, active bool, replica string) map[string]any {
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Engine",
		"metadata": Meta(ns, name, map[string]any{longhorn.VolumeLabel: vol, "longhornnode": node}),
		"spec": map[string]any{"volumeName": vol, "volumeSize": "1073741824", "nodeID": node, "active": active,
			"desireState": "running", "engineImage": Image, "frontend": "blockdev", "replicaAddressMap": map[string]any{replica: "10.0.0.1:10000"}},
		"status": map[string]any{"ownerID": node, "currentState": "running", "instanceManagerName": "instance-manager-e-" + node,
			"endpoint": "/dev/longhorn/" + vol, "currentImage": Image, "ip": "10.0.0.1", "port": 10001, "started": true,
			"replicaModeMap": map[string]any{replica: "RW"}, "snapshots": map[string]any{"volume-head": map[string]any{"name": "volume-head"}},
			"lastRestoredBackup": "", "conditions": nil},
	}
}

// Replica is a running replica of vol serving engine.
func Replica(ns, vol, name, node, engine string, active bool) map[string]any {
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Replica",
		"metadata": Meta(ns, name, map[string]any{longhorn.VolumeLabel: vol}),
		"spec": map[string]any{"volumeName": vol, "nodeID": node, "engineName": engine, "active": active, "desireState": "running",
			"dataDirectoryName": vol + "-0a1b2c3d", "diskID": "disk-1", "healthyAt": "", "failedAt": ""},
		"status": map[string]any{"ownerID": node, "currentState": "running", "instanceManagerName": "instance-manager-r-" + node},
	}
}

// EngineIM is a 1.4-style engine instance manager on node running engines.
func EngineIM(ns, node string, engines ...string) map[string]any {
	inst := map[string]any{}
	for _, e := range engines {
		inst[e] = map[string]any{"spec": map[string]any{"name": e}, "status": map[string]any{"state": "running"}}
	}
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "InstanceManager",
		"metadata": Meta(ns, "instance-manager-e-"+node, nil),
		"spec":     map[string]any{"nodeID": node, "type": "engine", "image": "longhornio/longhorn-instance-manager:v1.4.3"},
		"status":   map[string]any{"currentState": "running", "instances": inst},
	}
}

// Node is a Ready Longhorn node.
func Node(ns, name string) map[string]any {
	return map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Node", "metadata": Meta(ns, name, nil),
		"spec":   map[string]any{"name": name, "allowScheduling": true, "evictionRequested": false, "tags": []any{}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "", "message": ""}}},
	}
}

// Scenario is a namespace with: pvc-stuck in the #6642 state (engines on
// node-a and node-b, both active), pvc-ok healthy on node-a, pvc-logonly
// healthy on node-b (its BUG lines are in the logs only).
func Scenario(ns, version string) []map[string]any {
	return []map[string]any{
		Setting(ns, longhorn.VersionSetting, version),
		Setting(ns, "storage-minimal-available-percentage", "25"),
		Volume(ns, "pvc-stuck", "node-b"),
		Volume(ns, "pvc-ok", "node-a"),
		Volume(ns, "pvc-logonly", "node-b"),
		Engine(ns, "pvc-stuck", "pvc-stuck-e-aaaa1111", "node-a", true, "pvc-stuck-r-a"),
		Engine(ns, "pvc-stuck", "pvc-stuck-e-bbbb2222", "node-b", true, "pvc-stuck-r-b"),
		Engine(ns, "pvc-ok", "pvc-ok-e-cccc3333", "node-a", true, "pvc-ok-r-a"),
		Engine(ns, "pvc-logonly", "pvc-logonly-e-dddd4444", "node-b", true, "pvc-logonly-r-b"),
		Replica(ns, "pvc-stuck", "pvc-stuck-r-a", "node-a", "pvc-stuck-e-aaaa1111", true),
		Replica(ns, "pvc-stuck", "pvc-stuck-r-b", "node-a", "pvc-stuck-e-bbbb2222", false),
		Replica(ns, "pvc-ok", "pvc-ok-r-a", "node-a", "pvc-ok-e-cccc3333", true),
		Replica(ns, "pvc-logonly", "pvc-logonly-r-b", "node-b", "pvc-logonly-e-dddd4444", true),
		EngineIM(ns, "node-a", "pvc-stuck-e-aaaa1111", "pvc-ok-e-cccc3333"),
		EngineIM(ns, "node-b", "pvc-stuck-e-bbbb2222", "pvc-logonly-e-dddd4444"),
		Node(ns, "node-a"),
		Node(ns, "node-b"),
	}
}

// T1 is when the fixtures' BUG lines start.
var T1 = Created.Add(-3 * time.Hour)

// ManagerLogs: BUG lines for pvc-stuck on node-b's manager (and its
// previous container), for pvc-logonly earlier, filler around them.
func ManagerLogs(ns string, filler int) map[string]string {
	var b strings.Builder
	for i := 0; i < filler; i++ {
		b.WriteString(InfoLine(T1.Add(-time.Hour), i) + "\n")
	}
	b.WriteString(BugLine(Style143, T1, ns, "pvc-stuck", "pvc-stuck-e-bbbb2222", "pvc-stuck-e-aaaa1111", "node-b") + "\n")
	b.WriteString(BugLine(Style143, T1.Add(time.Hour), ns, "pvc-stuck", "pvc-stuck-e-bbbb2222", "pvc-stuck-e-aaaa1111", "node-b") + "\n")
	b.WriteString(BugLine(Style143, T1.Add(-2*time.Hour), ns, "pvc-logonly", "pvc-logonly-e-eeee5555", "pvc-logonly-e-dddd4444", "node-b") + "\n")
	return map[string]string{
		ns + "/longhorn-manager-bbbbb/longhorn-manager.log":   b.String(),
		ns + "/longhorn-manager-bbbbb/longhorn-manager.log.1": BugLine(Style143, T1.Add(-time.Minute), ns, "pvc-stuck", "pvc-stuck-e-bbbb2222", "pvc-stuck-e-aaaa1111", "node-b") + "\n",
		ns + "/longhorn-manager-aaaaa/longhorn-manager.log":   InfoLine(T1, 1) + "\n",
		// not a manager: never scanned
		ns + "/longhorn-ui-12345/longhorn-ui.log": BugLine(Style143, T1, ns, "pvc-ok", "x-e-1", "x-e-0", "n") + "\n",
	}
}
