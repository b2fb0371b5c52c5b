package longhorn

import (
	"encoding/json"
)

// Instance states shared by engines and replicas (status.currentState).
const (
	StateRunning  = "running"
	StateStopped  = "stopped"
	StateError    = "error"
	StateStarting = "starting"
	StateStopping = "stopping"
	StateUnknown  = "unknown"
)

// Replica modes in engine.status.replicaModeMap.
const (
	ModeRW  = "RW"
	ModeWO  = "WO"
	ModeERR = "ERR"
)

// Volume is longhorn.io/v1beta2 Volume.
type Volume struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       VolumeSpec   `json:"spec,omitempty"`
	Status     VolumeStatus `json:"status,omitempty"`
}

// VolumeSpec holds the desired attachment and migration targets.
type VolumeSpec struct {
	NodeID             string `json:"nodeID,omitempty"`
	MigrationNodeID    string `json:"migrationNodeID,omitempty"`
	EngineNodeID       string `json:"engineNodeID,omitempty"` // v1.12+, v2 only
	Migratable         bool   `json:"migratable,omitempty"`
	AccessMode         string `json:"accessMode,omitempty"`
	Frontend           string `json:"frontend,omitempty"`
	NumberOfReplicas   int    `json:"numberOfReplicas,omitempty"`
	DisableFrontend    bool   `json:"disableFrontend,omitempty"`
	LastAttachedBy     string `json:"lastAttachedBy,omitempty"`
	EngineImage        string `json:"engineImage,omitempty"`        // up to v1.8
	Image              string `json:"image,omitempty"`              // v1.6+
	BackendStoreDriver string `json:"backendStoreDriver,omitempty"` // v1.5–v1.8
	DataEngine         string `json:"dataEngine,omitempty"`         // v1.6+
	Standby            bool   `json:"Standby,omitempty"`            // the key really has a capital S
	Size               string `json:"size,omitempty"`
	// DataLocality and ReplicaAutoBalance open Longhorn's clean-up of extra
	// healthy replicas (cleanupExtraHealthyReplicas).
	DataLocality       string `json:"dataLocality,omitempty"`
	ReplicaAutoBalance string `json:"replicaAutoBalance,omitempty"`
}

// VolumeStatus is where Longhorn says what is true now.
type VolumeStatus struct {
	OwnerID                string `json:"ownerID,omitempty"`
	State                  string `json:"state,omitempty"`
	Robustness             string `json:"robustness,omitempty"`
	CurrentNodeID          string `json:"currentNodeID,omitempty"`
	CurrentEngineNodeID    string `json:"currentEngineNodeID,omitempty"` // v1.12+, v2 only
	CurrentImage           string `json:"currentImage,omitempty"`
	PendingNodeID          string `json:"pendingNodeID,omitempty"`          // up to v1.8
	CurrentMigrationNodeID string `json:"currentMigrationNodeID,omitempty"` // v1.5+
	SwitchoverState        string `json:"switchoverState,omitempty"`        // v1.12+, v2 only
	FrontendDisabled       bool   `json:"frontendDisabled,omitempty"`
	IsStandby              bool   `json:"isStandby,omitempty"`
	RestoreRequired        bool   `json:"restoreRequired,omitempty"`
	ExpansionRequired      bool   `json:"expansionRequired,omitempty"`
	// KubernetesStatus says which PV, PVC and pods use the volume.
	KubernetesStatus KubernetesStatus `json:"kubernetesStatus,omitempty"`
}

// KubernetesStatus is what Longhorn's kubernetes-pv controller records
// about the volume's PV, PVC and the pods (and their owners) that use it.
type KubernetesStatus struct {
	PVName          string           `json:"pvName,omitempty"`
	PVCName         string           `json:"pvcName,omitempty"`
	Namespace       string           `json:"namespace,omitempty"`
	LastPodRefAt    string           `json:"lastPodRefAt,omitempty"`
	WorkloadsStatus []WorkloadStatus `json:"workloadsStatus,omitempty"`
}

// WorkloadStatus is one pod using the volume and its owner (for a KubeVirt
// VM: the virt-launcher pod and its VirtualMachineInstance).
type WorkloadStatus struct {
	PodName      string `json:"podName,omitempty"`
	PodStatus    string `json:"podStatus,omitempty"`
	WorkloadName string `json:"workloadName,omitempty"`
	WorkloadType string `json:"workloadType,omitempty"`
}

// Volume states and robustness values.
const (
	VolumeStateAttached  = "attached"
	VolumeStateDetached  = "detached"
	VolumeStateAttaching = "attaching"
	VolumeStateDetaching = "detaching"

	RobustnessHealthy  = "healthy"
	RobustnessDegraded = "degraded"
	RobustnessFaulted  = "faulted"
	RobustnessUnknown  = "unknown"

	AccessModeRWX = "rwx"
	AccessModeRWO = "rwo"

	DataEngineV1 = "v1"
	DataEngineV2 = "v2"
)

// Engine is longhorn.io/v1beta2 Engine. InstanceSpec and InstanceStatus are
// embedded without a JSON name in Longhorn, so their fields sit directly here.
type Engine struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       EngineSpec   `json:"spec,omitempty"`
	Status     EngineStatus `json:"status,omitempty"`
}

// EngineSpec is the desired engine placement and the active flag.
type EngineSpec struct {
	VolumeName         string            `json:"volumeName,omitempty"`
	VolumeSize         string            `json:"volumeSize,omitempty"`
	NodeID             string            `json:"nodeID,omitempty"`
	Active             bool              `json:"active,omitempty"`
	DesireState        string            `json:"desireState,omitempty"`
	EngineImage        string            `json:"engineImage,omitempty"`
	Image              string            `json:"image,omitempty"`
	BackendStoreDriver string            `json:"backendStoreDriver,omitempty"`
	DataEngine         string            `json:"dataEngine,omitempty"`
	Frontend           string            `json:"frontend,omitempty"`
	DisableFrontend    bool              `json:"disableFrontend,omitempty"`
	ReplicaAddressMap  map[string]string `json:"replicaAddressMap,omitempty"`
}

// EngineStatus is what the engine's owner reports.
type EngineStatus struct {
	OwnerID             string            `json:"ownerID,omitempty"`
	CurrentState        string            `json:"currentState,omitempty"`
	InstanceManagerName string            `json:"instanceManagerName,omitempty"`
	Endpoint            string            `json:"endpoint,omitempty"`
	CurrentImage        string            `json:"currentImage,omitempty"`
	IP                  string            `json:"ip,omitempty"`
	Port                int               `json:"port,omitempty"`
	Started             bool              `json:"started,omitempty"`
	ReplicaModeMap      map[string]string `json:"replicaModeMap,omitempty"`
	// ReplicaTransitionTimeMap is when each replica last changed mode
	// (1.5.5+, 1.6.1+); the volume controller compares it with a
	// replica's spec.lastHealthyAt.
	ReplicaTransitionTimeMap map[string]string          `json:"replicaTransitionTimeMap,omitempty"`
	Snapshots                map[string]json.RawMessage `json:"snapshots,omitempty"`
}

// EngineFrontend is longhorn.io/v1beta2 EngineFrontend (Longhorn 1.12+, v2
// data engine only): the initiator on the workload's node, which sends the
// volume's I/O to one engine (the target) over NVMe/TCP. spec.engineName and
// spec.targetIP/targetPort name the engine it should use;
// status.targetIP/targetPort the one it is connected to now. Longhorn 1.12.0
// keeps one of them spec.active, as for engines
// (GetCurrentEngineFrontendAndExtras fails with "BUG: found the second active
// engine frontend" otherwise).
type EngineFrontend struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       EngineFrontendSpec   `json:"spec,omitempty"`
	Status     EngineFrontendStatus `json:"status,omitempty"`
}

// EngineFrontendSpec is where the frontend runs and which engine it targets.
type EngineFrontendSpec struct {
	VolumeName  string `json:"volumeName,omitempty"`
	NodeID      string `json:"nodeID,omitempty"`
	Active      bool   `json:"active,omitempty"`
	DesireState string `json:"desireState,omitempty"`
	DataEngine  string `json:"dataEngine,omitempty"`
	Frontend    string `json:"frontend,omitempty"`
	EngineName  string `json:"engineName,omitempty"`
	TargetIP    string `json:"targetIP,omitempty"`
	TargetPort  int    `json:"targetPort,omitempty"`
}

// EngineFrontendStatus is the frontend process as its owner reports it.
type EngineFrontendStatus struct {
	OwnerID             string `json:"ownerID,omitempty"`
	CurrentState        string `json:"currentState,omitempty"`
	InstanceManagerName string `json:"instanceManagerName,omitempty"`
	Endpoint            string `json:"endpoint,omitempty"`
	TargetIP            string `json:"targetIP,omitempty"`
	TargetPort          int    `json:"targetPort,omitempty"`
}

// Replica is longhorn.io/v1beta2 Replica.
type Replica struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       ReplicaSpec   `json:"spec,omitempty"`
	Status     ReplicaStatus `json:"status,omitempty"`
}

// ReplicaSpec says which engine a replica serves and whether it is active.
type ReplicaSpec struct {
	VolumeName        string `json:"volumeName,omitempty"`
	NodeID            string `json:"nodeID,omitempty"`
	EngineName        string `json:"engineName,omitempty"`
	Active            bool   `json:"active,omitempty"`
	DesireState       string `json:"desireState,omitempty"`
	DataDirectoryName string `json:"dataDirectoryName,omitempty"`
	DiskID            string `json:"diskID,omitempty"`
	DiskPath          string `json:"diskPath,omitempty"`
	HealthyAt         string `json:"healthyAt,omitempty"`
	FailedAt          string `json:"failedAt,omitempty"`
	// LastFailedAt is never cleared (1.8+); a migration clone copies it
	// from its original on 1.8.3–1.10.1 (longhorn#11397).
	LastFailedAt  string `json:"lastFailedAt,omitempty"`
	LastHealthyAt string `json:"lastHealthyAt,omitempty"`
	EngineImage   string `json:"engineImage,omitempty"`
	Image         string `json:"image,omitempty"`
}

// ReplicaStatus is the replica process state.
type ReplicaStatus struct {
	OwnerID             string `json:"ownerID,omitempty"`
	CurrentState        string `json:"currentState,omitempty"`
	InstanceManagerName string `json:"instanceManagerName,omitempty"`
	// EvictionRequested makes Longhorn delete the replica once the volume
	// has more healthy active replicas than it needs.
	EvictionRequested bool `json:"evictionRequested,omitempty"`
}

// VolumeAttachment is longhorn.io/v1beta2 VolumeAttachment (Longhorn 1.5+).
// Its name is the volume name. It is not storage.k8s.io's VolumeAttachment.
type VolumeAttachment struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       VolumeAttachmentSpec   `json:"spec,omitempty"`
	Status     VolumeAttachmentStatus `json:"status,omitempty"`
}

// VolumeAttachmentSpec holds the attachment tickets keyed by id.
type VolumeAttachmentSpec struct {
	Volume            string                      `json:"volume,omitempty"`
	AttachmentTickets map[string]AttachmentTicket `json:"attachmentTickets,omitempty"`
}

// AttachmentTicket asks Longhorn to attach the volume to a node.
type AttachmentTicket struct {
	ID         string            `json:"id,omitempty"`
	Type       string            `json:"type,omitempty"`
	NodeID     string            `json:"nodeID,omitempty"`
	Parameters map[string]string `json:"parameters,omitempty"`
	Generation int64             `json:"generation,omitempty"`
}

// VolumeAttachmentStatus reports per ticket whether it is satisfied.
type VolumeAttachmentStatus struct {
	AttachmentTicketStatuses map[string]AttachmentTicketStatus `json:"attachmentTicketStatuses,omitempty"`
}

// AttachmentTicketStatus is the status of one ticket.
type AttachmentTicketStatus struct {
	ID         string      `json:"id,omitempty"`
	Satisfied  bool        `json:"satisfied,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
	Generation int64       `json:"generation,omitempty"`
}

// Attacher types that matter to migration.
const (
	AttacherTypeCSI         = "csi-attacher"
	AttacherTypeLonghornAPI = "longhorn-api"
)

// Condition is a Longhorn condition (v1beta2 uses lists of these).
type Condition struct {
	Type               string `json:"type,omitempty"`
	Status             string `json:"status,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	LastProbeTime      string `json:"lastProbeTime,omitempty"`
}

// Node is longhorn.io/v1beta2 Node; its name is the Kubernetes node name.
type Node struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       NodeSpec   `json:"spec,omitempty"`
	Status     NodeStatus `json:"status,omitempty"`
}

// NodeSpec carries the scheduling switches.
type NodeSpec struct {
	Name              string `json:"name,omitempty"`
	AllowScheduling   bool   `json:"allowScheduling,omitempty"`
	EvictionRequested bool   `json:"evictionRequested,omitempty"`
}

// NodeStatus carries the node conditions (Ready, Schedulable, ...) and
// its disks'.
type NodeStatus struct {
	Conditions []Condition            `json:"conditions,omitempty"`
	DiskStatus map[string]*DiskStatus `json:"diskStatus,omitempty"`
}

// DiskStatus is one disk of a node: its UUID (a replica's spec.diskID) and
// conditions (Ready, Schedulable).
type DiskStatus struct {
	DiskUUID   string      `json:"diskUUID,omitempty"`
	Conditions []Condition `json:"conditions,omitempty"`
}

// Setting is longhorn.io/v1beta2 Setting: the value is top-level, there is no spec.
type Setting struct {
	ObjectMeta `json:"metadata,omitempty"`
	Value      string `json:"value"`
}

// InstanceManager is longhorn.io/v1beta2 InstanceManager; only the process
// names matter here, to find orphan engine processes.
type InstanceManager struct {
	ObjectMeta `json:"metadata,omitempty"`
	Spec       InstanceManagerSpec   `json:"spec,omitempty"`
	Status     InstanceManagerStatus `json:"status,omitempty"`
}

// InstanceManagerSpec says where and what kind of processes it runs.
type InstanceManagerSpec struct {
	NodeID string `json:"nodeID,omitempty"`
	Type   string `json:"type,omitempty"` // engine, replica (≤1.4) or aio (1.5+)
}

// InstanceManagerStatus lists processes: `instances` up to 1.4 (kept,
// deprecated, later), `instanceEngines`/`instanceReplicas` from 1.5.
type InstanceManagerStatus struct {
	CurrentState     string                     `json:"currentState,omitempty"`
	Instances        map[string]json.RawMessage `json:"instances,omitempty"`
	InstanceEngines  map[string]json.RawMessage `json:"instanceEngines,omitempty"`
	InstanceReplicas map[string]json.RawMessage `json:"instanceReplicas,omitempty"`
}
