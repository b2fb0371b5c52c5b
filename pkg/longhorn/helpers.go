package longhorn

import (
	"crypto/sha256"
	"encoding/hex"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Deleting reports whether the engine has been deleted and waits for its
// finalizer.
func (e *Engine) Deleting() bool { return e.DeletionTimestamp != nil }

// IsActive is Longhorn's notion of an active engine for this tool: spec.active
// set and not being deleted. An active engine that is being deleted is a
// pending cleanup, not a second active engine.
func (e *Engine) IsActive() bool { return e.Spec.Active && !e.Deleting() }

// Deleting reports whether the engine frontend has been deleted and waits
// for its finalizer.
func (f *EngineFrontend) Deleting() bool { return f.DeletionTimestamp != nil }

// IsActive: spec.active set and not being deleted, as for engines.
func (f *EngineFrontend) IsActive() bool { return f.Spec.Active && !f.Deleting() }

// Targets reports whether the frontend is connected to engine e now: its
// status.targetIP/targetPort are e's status.ip/port (the address Longhorn
// 1.12.0's switchover writes into spec.targetIP/targetPort and waits to see
// in status).
func (f *EngineFrontend) Targets(e *Engine) bool {
	return e != nil && e.Status.IP != "" && f.Status.TargetIP == e.Status.IP && f.Status.TargetPort == e.Status.Port
}

// ImageName returns the engine image whichever field this Longhorn version
// uses.
func (e *Engine) ImageName() string { return image(e.Spec.Image, e.Spec.EngineImage) }

// DataEngineName returns v1 or v2 whichever field this version uses.
func (e *Engine) DataEngineName() string {
	return dataEngine(e.Spec.DataEngine, e.Spec.BackendStoreDriver)
}

// RWCount counts replicas in read-write mode.
func (e *Engine) RWCount() int {
	n := 0
	for _, m := range e.Status.ReplicaModeMap {
		if m == ModeRW {
			n++
		}
	}
	return n
}

// Available is Longhorn's test that an engine can serve I/O: not deleting,
// desired and currently running, at least one RW replica.
func (e *Engine) Available() bool {
	return !e.Deleting() && e.Spec.DesireState == StateRunning &&
		e.Status.CurrentState == StateRunning && e.RWCount() > 0
}

// SnapshotNames returns the sorted keys of status.snapshots.
func (e *Engine) SnapshotNames() []string { return SortedKeys(e.Status.Snapshots) }

// EngineSuffix returns N for a deterministic name "<vol>-e-N".
func (e *Engine) EngineSuffix() (int, bool) {
	i := strings.LastIndex(e.Name, "-e-")
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(e.Name[i+3:])
	return n, err == nil && n >= 0
}

// DataPath is the key Longhorn's volume controller gives a replica's data
// directory (types.GetReplicaDataPath: disk path, "replicas", directory), or
// "" for a replica it skips as unavailable (not scheduled to a node and disk).
func (r *Replica) DataPath() string {
	if r.Spec.NodeID == "" || r.Spec.DiskID == "" || r.Spec.DiskPath == "" || r.Spec.DataDirectoryName == "" {
		return ""
	}
	return path.Join(r.Spec.DiskPath, "replicas", r.Spec.DataDirectoryName)
}

// WantedImage returns the image the volume should run.
func (v *Volume) WantedImage() string { return image(v.Spec.Image, v.Spec.EngineImage) }

// DataEngineName returns v1 or v2 whichever field this version uses.
func (v *Volume) DataEngineName() string {
	return dataEngine(v.Spec.DataEngine, v.Spec.BackendStoreDriver)
}

// UpgradePending reports an engine upgrade in progress: Longhorn does not
// process migrations then.
func (v *Volume) UpgradePending() bool {
	w := v.WantedImage()
	return w != "" && v.Status.CurrentImage != "" && w != v.Status.CurrentImage
}

// Migrating is Longhorn's isVolumeMigrating: spec.migrationNodeID set or,
// from 1.5, status.currentMigrationNodeID still set.
func (v *Volume) Migrating() bool {
	return v.Spec.MigrationNodeID != "" || v.Status.CurrentMigrationNodeID != ""
}

// Migratable: a migratable rwx volume, the only kind whose migration
// Longhorn's processMigration handles.
func (v *Volume) Migratable() bool {
	return v.Spec.Migratable && v.Spec.AccessMode == AccessModeRWX
}

// ServingNodeID is the node whose engine serves I/O: currentNodeID, or for a
// v2 volume on 1.12+ the engine node when it is set.
func (v *Volume) ServingNodeID() string {
	if v.DataEngineName() == DataEngineV2 && v.Status.CurrentEngineNodeID != "" {
		return v.Status.CurrentEngineNodeID
	}
	return v.Status.CurrentNodeID
}

// MigrationReady tells whether robustness allows Longhorn to process a migration.
func (v *Volume) RobustnessUsable() bool {
	return v.Status.Robustness == RobustnessHealthy || v.Status.Robustness == RobustnessDegraded
}

// Ready reports the node's Ready condition.
func (n *Node) Ready() bool { return conditionTrue(n.Status.Conditions, "Ready") }

// DownOrDeleted is Longhorn's IsNodeDownOrDeleted for a node as read (nil:
// not found): deleted, or its Ready condition False because Kubernetes
// lost the node or reports it not ready.
func (n *Node) DownOrDeleted() bool {
	if n == nil {
		return true
	}
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "False" && (c.Reason == "KubernetesNodeGone" || c.Reason == "KubernetesNodeNotReady")
		}
	}
	return false
}

// ReplicaUnavailable is the volume controller's IsReplicaUnavailable, which
// decides the replicas a migration waits for: not scheduled to a node and
// disk, its node (as read; nil: not found) down or deleted, or its disk
// not Ready.
func ReplicaUnavailable(r *Replica, node *Node) bool {
	if r.DataPath() == "" || node.DownOrDeleted() {
		return true
	}
	for _, d := range node.Status.DiskStatus {
		if d != nil && d.DiskUUID == r.Spec.DiskID && !conditionTrue(d.Conditions, "Ready") {
			return true
		}
	}
	return false
}

// Schedulable reports allowScheduling and, when present, the Schedulable condition.
func (n *Node) Schedulable() bool {
	if !n.Spec.AllowScheduling {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == "Schedulable" {
			return c.Status == "True"
		}
	}
	return true
}

// CSITicketID is the id the CSI driver gives a node's attachment ticket; it
// equals the storage.k8s.io VolumeAttachment name.
func CSITicketID(volume, node string) string {
	sum := sha256.Sum256([]byte(volume + "driver.longhorn.io" + node))
	return "csi-" + hex.EncodeToString(sum[:])
}

// Satisfied is Longhorn's IsAttachmentTicketSatisfied.
func (va *VolumeAttachment) Satisfied(id string) bool {
	t, ok := va.Spec.AttachmentTickets[id]
	if !ok {
		return false
	}
	s, ok := va.Status.AttachmentTicketStatuses[id]
	return ok && s.Satisfied && s.Generation == t.Generation
}

// CSITicketNodes are the nodes csi-attacher tickets ask for, each once,
// sorted (none for a nil va).
func (va *VolumeAttachment) CSITicketNodes() []string {
	if va == nil {
		return nil
	}
	var nodes []string
	for _, t := range va.CSITickets() {
		if t.NodeID != "" && !slices.Contains(nodes, t.NodeID) {
			nodes = append(nodes, t.NodeID)
		}
	}
	slices.Sort(nodes)
	return nodes
}

// HasTicketOn reports whether any attachment ticket asks for node (false
// for a nil va).
func (va *VolumeAttachment) HasTicketOn(node string) bool {
	if va == nil {
		return false
	}
	for _, t := range va.Spec.AttachmentTickets {
		if t.NodeID == node {
			return true
		}
	}
	return false
}

// CSITickets returns the csi-attacher tickets.
func (va *VolumeAttachment) CSITickets() []AttachmentTicket {
	var out []AttachmentTicket
	for _, id := range SortedKeys(va.Spec.AttachmentTickets) {
		if t := va.Spec.AttachmentTickets[id]; t.Type == AttacherTypeCSI {
			if t.ID == "" {
				t.ID = id
			}
			out = append(out, t)
		}
	}
	return out
}

// image is spec.image (1.6+) when set, else spec.engineImage (before).
func image(image, engineImage string) string {
	if image != "" {
		return image
	}
	return engineImage
}

func dataEngine(dataEngine, backendStoreDriver string) string {
	switch {
	case dataEngine != "":
		return dataEngine
	case backendStoreDriver != "":
		return backendStoreDriver
	}
	return DataEngineV1
}

func conditionTrue(cs []Condition, t string) bool {
	for _, c := range cs {
		if c.Type == t {
			return c.Status == "True"
		}
	}
	return false
}
