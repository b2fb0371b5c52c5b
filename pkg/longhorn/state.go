package longhorn

import "time"

// State is everything the detector needs about one Longhorn namespace, read
// from a live cluster, a support bundle or YAML files. Detection never knows
// which.
type State struct {
	Namespace string
	// Version is the running Longhorn release; zero when the setting was not found.
	Version Version
	// VersionSource says where Version came from (e.g. "setting current-longhorn-version").
	VersionSource string
	// Now is the reference time for ages (the bundle's time when offline).
	Now time.Time

	Volumes           []Volume
	Engines           []Engine
	Replicas          []Replica
	VolumeAttachments []VolumeAttachment
	// EngineFrontends are read on Longhorn 1.12+ only (v2 volumes).
	EngineFrontends  []EngineFrontend
	Nodes            []Node
	InstanceManagers []InstanceManager
	// InstanceManagersRead is false when instance managers were not read
	// (orphan-process checks are then skipped rather than reported clean).
	InstanceManagersRead bool
	// PDBs are the PodDisruptionBudgets of the Longhorn namespace, which
	// hold a node's drain; PDBsRead says whether and why not (drain.go).
	PDBs     []PDB
	PDBsRead ReadStatus
	// Workloads are the pods and CSI VolumeAttachments that say where the
	// volumes' workloads run (zero when not read: see Workloads.PodsRead).
	Workloads Workloads
	// ReplicaAutoBalance is the global replica-auto-balance setting: ""
	// when it does not exist (Longhorn then reads disabled), or
	// SettingUnreadable when it could not be read.
	ReplicaAutoBalance string
}

// SettingUnreadable is the value of a setting that could not be read.
const SettingUnreadable = "<unreadable>"
