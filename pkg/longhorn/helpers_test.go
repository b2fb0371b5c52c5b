package longhorn

import (
	"encoding/json"
	"reflect"
	"regexp"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCSITicketID(t *testing.T) {
	hex64 := regexp.MustCompile(`^csi-[0-9a-f]{64}$`)
	tests := []struct{ volume, node, want string }{
		// Expected values computed outside Go:
		//   printf '%s' 'pvc-0a1b2c3ddriver.longhorn.ionode-a' | sha256sum
		{"pvc-0a1b2c3d", "node-a", "csi-ab1af63c2b17478c0922cb1ddb5550d338c4f227f9843183b99f8e85451f69c4"},
		{"pvc-0a1b2c3d", "node-b", "csi-2e03d372807e2b1ce60181168f69e3cabd43d314442f269286c999378b7f5727"},
	}
	for _, tt := range tests {
		got := CSITicketID(tt.volume, tt.node)
		if got != tt.want {
			t.Errorf("CSITicketID(%q, %q) = %q, want %q", tt.volume, tt.node, got, tt.want)
		}
	}
	seen := map[string]string{}
	for _, vol := range []string{"v", "pvc-1", "pvc-2", "vm-disk-0"} {
		for _, node := range []string{"", "a", "b", "harvester-node-1"} {
			id := CSITicketID(vol, node)
			if !hex64.MatchString(id) {
				t.Errorf("CSITicketID(%q,%q) = %q, not csi-<64 hex>", vol, node, id)
			}
			if again := CSITicketID(vol, node); again != id {
				t.Errorf("CSITicketID(%q,%q) not stable: %q then %q", vol, node, id, again)
			}
			if prev, dup := seen[id]; dup {
				t.Errorf("CSITicketID collision: %s and %s/%s", prev, vol, node)
			}
			seen[id] = vol + "/" + node
		}
	}
}

func TestEngineAvailableAndRWCount(t *testing.T) {
	now := metav1.NewTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	running := func(modes map[string]string) Engine {
		e := Engine{}
		e.Name = "vol-e-0"
		e.Spec.DesireState = StateRunning
		e.Status.CurrentState = StateRunning
		e.Status.ReplicaModeMap = modes
		return e
	}
	tests := []struct {
		name      string
		mutate    func(*Engine)
		modes     map[string]string
		rw        int
		available bool
	}{
		{name: "running with RW", modes: map[string]string{"r1": ModeRW, "r2": ModeRW, "r3": ModeWO}, rw: 2, available: true},
		{name: "only WO and ERR", modes: map[string]string{"r1": ModeWO, "r2": ModeERR}, rw: 0},
		{name: "no replica map", modes: nil, rw: 0},
		{name: "lower-case rw is not RW", modes: map[string]string{"r1": "rw"}, rw: 0},
		{name: "deleting", modes: map[string]string{"r1": ModeRW}, rw: 1, mutate: func(e *Engine) { e.DeletionTimestamp = &now }},
		{name: "desire stopped", modes: map[string]string{"r1": ModeRW}, rw: 1, mutate: func(e *Engine) { e.Spec.DesireState = StateStopped }},
		{name: "current starting", modes: map[string]string{"r1": ModeRW}, rw: 1, mutate: func(e *Engine) { e.Status.CurrentState = StateStarting }},
		{name: "current error", modes: map[string]string{"r1": ModeRW}, rw: 1, mutate: func(e *Engine) { e.Status.CurrentState = StateError }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := running(tt.modes)
			if tt.mutate != nil {
				tt.mutate(&e)
			}
			expect(t, "RWCount()", e.RWCount(), tt.rw)
			expect(t, "Available()", e.Available(), tt.available)
		})
	}
}

func TestEngineActiveDeleting(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		active, deleting   bool
		isActive, isDelete bool
	}{
		{false, false, false, false},
		{true, false, true, false},
		{true, true, false, true}, // pending cleanup is not "active"
		{false, true, false, true},
	}
	for _, tt := range tests {
		var e Engine
		e.Spec.Active = tt.active
		if tt.deleting {
			e.DeletionTimestamp = &now
		}
		if e.IsActive() != tt.isActive || e.Deleting() != tt.isDelete {
			t.Errorf("active=%t deleting=%t: IsActive()=%t Deleting()=%t, want %t %t",
				tt.active, tt.deleting, e.IsActive(), e.Deleting(), tt.isActive, tt.isDelete)
		}
	}
}

func TestEngineSuffix(t *testing.T) {
	tests := []struct {
		name string
		n    int
		ok   bool
	}{
		{"vol-e-0", 0, true},
		{"vol-e-1", 1, true},
		{"vol-e-17", 17, true},
		{"pvc-4f1c-e-2", 2, true},
		{"my-e-vol-e-3", 3, true}, // the last -e- counts
		{"vol-e-1a2b3c4d", 0, false},
		{"vol-e-deadbeef", 0, false},
		{"vol-e-", 0, false},
		{"vol-e--1", 0, false},
		{"vol", 0, false},
		{"vol-r-12345678", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		e := Engine{}
		e.Name = tt.name
		n, ok := e.EngineSuffix()
		if ok != tt.ok || (ok && n != tt.n) {
			t.Errorf("EngineSuffix(%q) = %d, %t; want %d, %t", tt.name, n, ok, tt.n, tt.ok)
		}
	}
}

func TestEngineImageAndDataEngine(t *testing.T) {
	tests := []struct {
		spec       EngineSpec
		image, eng string
	}{
		{EngineSpec{EngineImage: "ei:v1.4.3"}, "ei:v1.4.3", DataEngineV1},
		{EngineSpec{EngineImage: "old", Image: "new"}, "new", DataEngineV1},
		{EngineSpec{BackendStoreDriver: "v2"}, "", DataEngineV2},
		{EngineSpec{DataEngine: "v2", BackendStoreDriver: "v1"}, "", DataEngineV2},
		{EngineSpec{DataEngine: "v1"}, "", DataEngineV1},
	}
	for i, tt := range tests {
		e := Engine{Spec: tt.spec}
		if e.ImageName() != tt.image || e.DataEngineName() != tt.eng {
			t.Errorf("#%d: ImageName()=%q DataEngineName()=%q, want %q %q", i, e.ImageName(), e.DataEngineName(), tt.image, tt.eng)
		}
	}
}

func TestVolumeAttachmentSatisfied(t *testing.T) {
	id := CSITicketID("vol", "b")
	va := VolumeAttachment{
		Spec: VolumeAttachmentSpec{AttachmentTickets: map[string]AttachmentTicket{
			id:             {ID: id, Type: AttacherTypeCSI, NodeID: "b", Generation: 2},
			"no-status":    {ID: "no-status", Type: AttacherTypeCSI, NodeID: "c", Generation: 0},
			"unsatisfied":  {ID: "unsatisfied", Type: AttacherTypeLonghornAPI, NodeID: "d", Generation: 1},
			"old-gen":      {ID: "old-gen", Type: AttacherTypeCSI, NodeID: "e", Generation: 3},
			"newer-status": {ID: "newer-status", Type: AttacherTypeCSI, NodeID: "f", Generation: 1},
		}},
		Status: VolumeAttachmentStatus{AttachmentTicketStatuses: map[string]AttachmentTicketStatus{
			id:             {ID: id, Satisfied: true, Generation: 2},
			"unsatisfied":  {ID: "unsatisfied", Satisfied: false, Generation: 1},
			"old-gen":      {ID: "old-gen", Satisfied: true, Generation: 2},
			"newer-status": {ID: "newer-status", Satisfied: true, Generation: 2},
			"status-only":  {ID: "status-only", Satisfied: true},
		}},
	}
	tests := map[string]bool{
		id:             true,
		"no-status":    false,
		"unsatisfied":  false,
		"old-gen":      false, // generation mismatch
		"newer-status": false, // generation mismatch the other way
		"status-only":  false, // no spec ticket
		"missing":      false,
	}
	for tid, want := range tests {
		if got := va.Satisfied(tid); got != want {
			t.Errorf("Satisfied(%q) = %t, want %t", tid, got, want)
		}
	}
	var empty VolumeAttachment
	if empty.Satisfied(id) {
		t.Error("empty VolumeAttachment satisfies a ticket")
	}

	csi := va.CSITickets()
	var nodes []string
	for _, tk := range csi {
		if tk.Type != AttacherTypeCSI || tk.ID == "" {
			t.Errorf("CSITickets returned %+v", tk)
		}
		nodes = append(nodes, tk.NodeID)
	}
	// Sorted by id: the csi-<hash> id sorts before the plain names.
	if want := []string{"b", "f", "c", "e"}; !reflect.DeepEqual(nodes, want) {
		t.Errorf("CSITickets nodes = %v, want %v", nodes, want)
	}
}

func TestCSITicketsFillsMissingID(t *testing.T) {
	va := VolumeAttachment{Spec: VolumeAttachmentSpec{AttachmentTickets: map[string]AttachmentTicket{
		"csi-x": {Type: AttacherTypeCSI, NodeID: "a"},
	}}}
	got := va.CSITickets()
	if len(got) != 1 || got[0].ID != "csi-x" {
		t.Errorf("CSITickets() = %+v, want one ticket with id csi-x", got)
	}
	if va.Spec.AttachmentTickets["csi-x"].ID != "" {
		t.Error("CSITickets modified the spec map")
	}
}

func TestVolumeHelpers(t *testing.T) {
	tests := []struct {
		name      string
		spec      VolumeSpec
		status    VolumeStatus
		upgrade   bool
		migrating bool
		serving   string
		robust    bool
		engine    string
	}{
		{
			name:    "v1 attached, no upgrade",
			spec:    VolumeSpec{NodeID: "a", EngineImage: "ei:1"},
			status:  VolumeStatus{CurrentNodeID: "a", CurrentImage: "ei:1", Robustness: RobustnessHealthy},
			serving: "a", robust: true, engine: DataEngineV1,
		},
		{
			name:    "engineImage differs: upgrade pending",
			spec:    VolumeSpec{NodeID: "a", EngineImage: "ei:2"},
			status:  VolumeStatus{CurrentNodeID: "a", CurrentImage: "ei:1", Robustness: RobustnessDegraded},
			upgrade: true, serving: "a", robust: true, engine: DataEngineV1,
		},
		{
			name:    "1.6+ spec.image wins over a stale engineImage",
			spec:    VolumeSpec{NodeID: "a", EngineImage: "ei:1", Image: "ei:2"},
			status:  VolumeStatus{CurrentNodeID: "a", CurrentImage: "ei:2", Robustness: RobustnessHealthy},
			serving: "a", robust: true, engine: DataEngineV1,
		},
		{
			name:    "1.6+ spec.image differs",
			spec:    VolumeSpec{Image: "ei:3"},
			status:  VolumeStatus{CurrentImage: "ei:2", Robustness: RobustnessFaulted},
			upgrade: true, engine: DataEngineV1,
		},
		{
			name:   "detached: current image empty is not an upgrade",
			spec:   VolumeSpec{Image: "ei:3"},
			status: VolumeStatus{Robustness: RobustnessUnknown},
			engine: DataEngineV1,
		},
		{
			name:      "spec.migrationNodeID set",
			spec:      VolumeSpec{NodeID: "a", MigrationNodeID: "b"},
			status:    VolumeStatus{CurrentNodeID: "a"},
			migrating: true, serving: "a", engine: DataEngineV1,
		},
		{
			name:      "1.5+ currentMigrationNodeID only",
			spec:      VolumeSpec{NodeID: "b"},
			status:    VolumeStatus{CurrentNodeID: "b", CurrentMigrationNodeID: "b"},
			migrating: true, serving: "b", engine: DataEngineV1,
		},
		{
			name:    "v2 with currentEngineNodeID serves from the engine node",
			spec:    VolumeSpec{NodeID: "a", DataEngine: DataEngineV2, EngineNodeID: "c"},
			status:  VolumeStatus{CurrentNodeID: "a", CurrentEngineNodeID: "c"},
			serving: "c", engine: DataEngineV2,
		},
		{
			name:    "v2 without currentEngineNodeID falls back to currentNodeID",
			spec:    VolumeSpec{NodeID: "a", DataEngine: DataEngineV2},
			status:  VolumeStatus{CurrentNodeID: "a"},
			serving: "a", engine: DataEngineV2,
		},
		{
			name:    "1.5 backendStoreDriver v2",
			spec:    VolumeSpec{NodeID: "a", BackendStoreDriver: DataEngineV2},
			status:  VolumeStatus{CurrentNodeID: "a", CurrentEngineNodeID: "d"},
			serving: "d", engine: DataEngineV2,
		},
		{
			name:    "v1 ignores currentEngineNodeID",
			spec:    VolumeSpec{NodeID: "a", DataEngine: DataEngineV1},
			status:  VolumeStatus{CurrentNodeID: "a", CurrentEngineNodeID: "c"},
			serving: "a", engine: DataEngineV1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Volume{Spec: tt.spec, Status: tt.status}
			expect(t, "UpgradePending()", v.UpgradePending(), tt.upgrade)
			expect(t, "Migrating()", v.Migrating(), tt.migrating)
			expect(t, "ServingNodeID()", v.ServingNodeID(), tt.serving)
			expect(t, "RobustnessUsable()", v.RobustnessUsable(), tt.robust)
			expect(t, "DataEngineName()", v.DataEngineName(), tt.engine)
		})
	}
}

func TestNodeReadySchedulable(t *testing.T) {
	cond := func(typ, status string) Condition { return Condition{Type: typ, Status: status} }
	tests := []struct {
		name        string
		allow       bool
		conds       []Condition
		ready, schd bool
	}{
		{"no conditions", true, nil, false, true},
		{"ready", true, []Condition{cond("Ready", "True")}, true, true},
		{"not ready", true, []Condition{cond("Ready", "False")}, false, true},
		{"unknown ready", true, []Condition{cond("Ready", "Unknown")}, false, true},
		{"scheduling disabled", false, []Condition{cond("Ready", "True")}, true, false},
		{"unschedulable condition", true, []Condition{cond("Ready", "True"), cond("Schedulable", "False")}, true, false},
		{"schedulable condition", true, []Condition{cond("Schedulable", "True")}, false, true},
	}
	for _, tt := range tests {
		n := Node{Spec: NodeSpec{AllowScheduling: tt.allow}, Status: NodeStatus{Conditions: tt.conds}}
		if n.Ready() != tt.ready || n.Schedulable() != tt.schd {
			t.Errorf("%s: Ready()=%t Schedulable()=%t, want %t %t", tt.name, n.Ready(), n.Schedulable(), tt.ready, tt.schd)
		}
	}
}

// TestReplicaUnavailable: the replicas Longhorn's volume controller leaves
// out of a migration (IsReplicaUnavailable, IsNodeDownOrDeleted).
func TestReplicaUnavailable(t *testing.T) {
	ready := func(status, reason string) []Condition {
		return []Condition{{Type: "Ready", Status: status, Reason: reason}}
	}
	node := func(conds []Condition, diskReady string) *Node {
		return &Node{Status: NodeStatus{Conditions: conds, DiskStatus: map[string]*DiskStatus{
			"default-disk": {DiskUUID: "disk-1", Conditions: []Condition{{Type: "Ready", Status: diskReady}}},
		}}}
	}
	scheduled := &Replica{Spec: ReplicaSpec{NodeID: "node-c", DiskID: "disk-1", DiskPath: "/var/lib/longhorn", DataDirectoryName: "vol-1"}}
	for _, tc := range []struct {
		name string
		r    *Replica
		n    *Node
		want bool
	}{
		{"up, disk Ready", scheduled, node(ready("True", ""), "True"), false},
		{"node not ready", scheduled, node(ready("False", "KubernetesNodeNotReady"), "True"), true},
		{"node gone", scheduled, node(ready("False", "KubernetesNodeGone"), "True"), true},
		{"not ready for another reason (manager pod missing)", scheduled, node(ready("False", "ManagerPodMissing"), "True"), false},
		{"node deleted", scheduled, nil, true},
		{"disk not Ready", scheduled, node(ready("True", ""), "False"), true},
		{"not scheduled", &Replica{}, node(ready("True", ""), "True"), true},
	} {
		if got := ReplicaUnavailable(tc.r, tc.n); got != tc.want {
			t.Errorf("%s: ReplicaUnavailable = %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestEngineProcessNames(t *testing.T) {
	raw := json.RawMessage(`{}`)
	set := func(names ...string) map[string]json.RawMessage {
		m := map[string]json.RawMessage{}
		for _, n := range names {
			m[n] = raw
		}
		return m
	}
	tests := []struct {
		name string
		im   InstanceManager
		want []string
	}{
		{
			name: "1.4 engine manager lists status.instances",
			im: InstanceManager{Spec: InstanceManagerSpec{Type: "engine"},
				Status: InstanceManagerStatus{Instances: set("vol-e-2b3c4d5e", "other-e-0", "vol-e-1a2b3c4d")}},
			want: []string{"other-e-0", "vol-e-1a2b3c4d", "vol-e-2b3c4d5e"},
		},
		{
			name: "1.4 replica manager lists no engines",
			im: InstanceManager{Spec: InstanceManagerSpec{Type: "replica"},
				Status: InstanceManagerStatus{Instances: set("vol-r-1a2b3c4d", "data-e-1-r-1a2b3c4d")}},
			want: nil,
		},
		{
			name: "replica names are left out of status.instances",
			im: InstanceManager{Spec: InstanceManagerSpec{Type: "engine"},
				Status: InstanceManagerStatus{Instances: set("vol-r-1a2b3c4d", "vol-e-0")}},
			want: []string{"vol-e-0"},
		},
		{
			name: "1.5 aio manager lists status.instanceEngines",
			im: InstanceManager{Spec: InstanceManagerSpec{Type: "aio"},
				Status: InstanceManagerStatus{
					InstanceEngines:  set("vol-e-1", "vol-e-0"),
					InstanceReplicas: set("vol-r-1a2b3c4d"),
					Instances:        set("stale-e-0"),
				}},
			want: []string{"vol-e-0", "vol-e-1"},
		},
		{
			name: "empty manager",
			im:   InstanceManager{Spec: InstanceManagerSpec{Type: "aio"}},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.im.EngineProcessNames()
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("EngineProcessNames() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSortedKeys(t *testing.T) {
	got := SortedKeys(map[string]int{"b": 1, "a": 2, "c": 3})
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Errorf("SortedKeys = %v", got)
	}
	if got := SortedKeys(map[string]int(nil)); got == nil || len(got) != 0 {
		t.Errorf("SortedKeys(nil) = %#v, want empty non-nil", got)
	}
}

func TestResources(t *testing.T) {
	if gvr := VolumeAttachments.GVR(); gvr.Group != "longhorn.io" || gvr.Version != "v1beta2" || gvr.Resource != "volumeattachments" {
		t.Errorf("VolumeAttachments.GVR() = %v", gvr)
	}
	if got := Engines.GroupResource(); got != "engines.longhorn.io" {
		t.Errorf("GroupResource() = %q", got)
	}
	if got := VolumeAttachments.Qualified(); got != "volumeattachment.longhorn.io" {
		t.Errorf("Qualified() = %q", got)
	}
	if len(AllResources) != 8 {
		t.Errorf("AllResources has %d entries", len(AllResources))
	}
}

// The JSON keys are the contract with the API server; a renamed tag would
// silently read zero values.
func TestDecodeJSONKeys(t *testing.T) {
	var v Volume
	err := json.Unmarshal([]byte(`{"metadata":{"name":"vol"},
		"spec":{"nodeID":"b","migrationNodeID":"","engineNodeID":"c","dataEngine":"v2","Standby":true,"image":"img"},
		"status":{"currentNodeID":"b","currentMigrationNodeID":"b","currentEngineNodeID":"c","robustness":"healthy","currentImage":"img","switchoverState":"preparing"}}`), &v)
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != "vol" || v.Spec.NodeID != "b" || v.Spec.EngineNodeID != "c" || !v.Spec.Standby ||
		v.Status.CurrentMigrationNodeID != "b" || v.Status.CurrentEngineNodeID != "c" || v.Status.SwitchoverState != "preparing" ||
		v.ServingNodeID() != "c" || v.UpgradePending() {
		t.Errorf("decoded volume = %+v", v)
	}
	var e Engine
	err = json.Unmarshal([]byte(`{"metadata":{"name":"vol-e-1","deletionTimestamp":"2024-01-01T00:00:00Z"},
		"spec":{"volumeName":"vol","nodeID":"b","active":true,"desireState":"running"},
		"status":{"currentState":"running","endpoint":"/dev/longhorn/vol","replicaModeMap":{"r1":"RW"}}}`), &e)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Spec.Active || e.IsActive() || !e.Deleting() || e.RWCount() != 1 || e.Status.Endpoint == "" || e.Spec.VolumeName != "vol" {
		t.Errorf("decoded engine = %+v", e)
	}
}

func TestSnapshotNames(t *testing.T) {
	e := Engine{}
	if got := e.SnapshotNames(); len(got) != 0 {
		t.Errorf("SnapshotNames() = %v", got)
	}
	e.Status.Snapshots = map[string]json.RawMessage{"volume-head": nil, "snap-b": nil, "snap-a": nil}
	if got := e.SnapshotNames(); !reflect.DeepEqual(got, []string{"snap-a", "snap-b", "volume-head"}) {
		t.Errorf("SnapshotNames() = %v", got)
	}
}

// expect reports a call whose result is not the one wanted; what names the
// call in the message.
func expect[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}
