package detect

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Type names the state a volume (or an orphan object) is in.
type Type string

const (
	// TypeMultipleActiveEngines is the #6642 state: two or more engines with
	// spec.active and no deletionTimestamp.
	TypeMultipleActiveEngines Type = "MultipleActiveEngines"
	// TypeMigrationInFlight is a live migration that has started and not been
	// confirmed or rolled back: two engines are legitimate here.
	TypeMigrationInFlight Type = "MigrationInFlight"
	// TypeMigrationFinishing is a confirm or rollback Longhorn is still
	// finishing (1.5+ currentMigrationNodeID set, or an extra inactive engine).
	TypeMigrationFinishing Type = "MigrationFinishing"
	// TypePendingCleanup is an active engine being deleted, waiting for its
	// finalizer: expected briefly after every confirm.
	TypePendingCleanup Type = "PendingCleanup"
	// TypeInvertedReplicaFlags: the serving engine's replicas are inactive
	// while replicas of another (or a vanished) engine are active.
	TypeInvertedReplicaFlags Type = "InvertedReplicaFlags"
	// TypeDanglingReplicas: the volume's one engine has no active replica of
	// its own while active replicas name an engine that no longer exists
	// (the stale engine was deleted by hand on 1.3/1.4, cf. longhorn#1988,
	// or a 1.4 confirm's delete of it timed out after it landed).
	TypeDanglingReplicas Type = "DanglingReplicas"
	// TypeSharedReplicaDirectory: the volume's one engine has two active
	// replicas on one data directory, which deleting either would wipe.
	TypeSharedReplicaDirectory Type = "SharedReplicaDirectory"
	// TypeNoActiveEngine: an attached volume with no active engine.
	TypeNoActiveEngine Type = "NoActiveEngine"
	// TypeOrphanEngine is an Engine CR whose volume no longer exists.
	TypeOrphanEngine Type = "OrphanEngine"
	// TypeOrphanEngineProcess is an engine process in an instance manager
	// with no Engine CR; it blocks node drains.
	TypeOrphanEngineProcess Type = "OrphanEngineProcess"
	// TypeSyncErrorInLogs (offline analysis): longhorn-manager logged the
	// #6642 BUG error for a volume whose objects show nothing wrong; the
	// state may have changed between the log lines and the snapshot.
	TypeSyncErrorInLogs Type = "SyncErrorInLogs"
)

// Action is what `fix` would do about a finding.
type Action string

const (
	ActionNone       Action = "none"
	ActionWait       Action = "wait"
	ActionDeactivate Action = "deactivate"
	ActionDelete     Action = "delete"
	// ActionSetReplicas writes replica spec.active / spec.engineName only;
	// the engines are left to Longhorn.
	ActionSetReplicas Action = "set-replicas"
	// ActionClearMigrationNode clears a stale status.currentMigrationNodeID
	// on a detached volume (the StaleMigrationNodeID state, family_fix.go):
	// one write, on the volume's status subresource.
	ActionClearMigrationNode Action = "clear-migration-node"
)

// Writes reports whether fix changes objects for this action. Deactivate
// and delete first set the replica flags right (ReplicaChanges), then
// change the stale engines; clear-migration-node writes the volume's status.
func (a Action) Writes() bool {
	return a == ActionDeactivate || a == ActionDelete || a == ActionSetReplicas || a == ActionClearMigrationNode
}

// Severity orders findings; Warning and above need a person's attention and
// make scan exit 1.
type Severity string

const (
	SeverityInfo     Severity = "info"
	SeverityWarning  Severity = "warning"
	SeverityCritical Severity = "critical"
)

// NeedsAttention is what turns scan's exit code to 1.
func (s Severity) NeedsAttention() bool { return s == SeverityWarning || s == SeverityCritical }

// Finding is one classified problem or state worth reporting, with the
// evidence that led to it.
type Finding struct {
	Volume   string   `json:"volume"`
	Type     Type     `json:"type"`
	Severity Severity `json:"severity"`
	// Keep is the engine that serves I/O and must not be touched.
	Keep string `json:"keep"`
	// Stale are the engines `fix` would change.
	Stale []string `json:"stale"`
	// Action is what `fix` would do to the stale engines on this version.
	Action Action `json:"action"`
	// Reason explains the classification and the action in one or two sentences.
	Reason string `json:"reason"`
	// ReplicaChanges are the replica writes fix makes before any engine
	// write, in order, so that no Longhorn path can delete an active
	// replica that shares a directory with the survivor.
	ReplicaChanges []ReplicaChange `json:"replicaChanges,omitempty"`
	// Preconditions are the checks, in order, for repairable types.
	Preconditions []Check `json:"preconditions,omitempty"`
	// Age is how long the state has lasted when that is known (pending cleanup).
	Age      *Duration `json:"age,omitempty"`
	Evidence Evidence  `json:"evidence"`
	// Steps are the repair by hand, in order, filled in with this volume's
	// names, for a state fix does not repair and whose repair is not the
	// maintainers' (v2 volumes on 1.12+, v2.go): commands to run, or a
	// sentence where no command does it.
	Steps []string `json:"steps,omitempty"`
	// Family is set for a state of the stuck-migration family (family.go):
	// the upstream issues, releases and the maintainers' repair.
	Family *FamilyInfo `json:"family,omitempty"`
	// Objects pins the volume's objects as classified (uid,
	// resourceVersion), for fix to write to and compare with a later read.
	// Not in the report.
	Objects Objects `json:"-"`
}

// Check is the precondition called name (one of the Check* names), nil
// when the finding has none of that name.
func (f *Finding) Check(name string) *Check {
	for i := range f.Preconditions {
		if f.Preconditions[i].Name == name {
			return &f.Preconditions[i]
		}
	}
	return nil
}

// Refused reports a repairable type whose preconditions failed.
func (f *Finding) Refused() bool {
	for _, c := range f.Preconditions {
		if !c.OK {
			return true
		}
	}
	return false
}

// ChangedReplicas names the replicas ReplicaChanges writes, in order.
func (f *Finding) ChangedReplicas() []string {
	names := make([]string, 0, len(f.ReplicaChanges))
	for _, c := range f.ReplicaChanges {
		names = append(names, c.Replica)
	}
	return names
}

// ReplicasAtRisk reports a state in which Longhorn may delete the replicas
// that back the engine serving I/O, or has left active replicas for a
// deleted engine: inverted replica flags, dangling replicas, and a stale
// engine being deleted while the flags are inverted (on 1.5.0/1.5.1 with
// status.currentMigrationNodeID set that is expected, and not critical).
// After a repair it stops every further write.
func (f *Finding) ReplicasAtRisk() bool {
	switch f.Type {
	case TypeInvertedReplicaFlags, TypeDanglingReplicas:
		return true
	case TypePendingCleanup:
		return f.Severity == SeverityCritical
	}
	return false
}

// Check is one precondition with the observed value that decided it.
type Check struct {
	// Name reads as the requirement ("no migration is requested").
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Detail is the observed value, passed or not.
	Detail string `json:"detail"`
	// Failure, set only when the check failed, reads as what is wrong and
	// why it stops a repair.
	Failure string `json:"failure,omitempty"`
	// NotChecked is true when the check passed only because what it needs
	// was not read (pods or CSI attachments: no permission, not served, not
	// in the bundle) or, for the extra-replica clean-up, there are no writes
	// to judge (release unknown, no survivor); Detail then starts with
	// "not checked: ".
	NotChecked bool `json:"notChecked,omitempty"`
}

// The names of the repair's preconditions, in the order they are checked
// (docs/scan-report.md, "Preconditions").
const (
	CheckVersionKnown         = "Longhorn version is known"
	CheckNoMigrationRequested = "no migration is requested"
	// CheckMigrationNotStarted: two active engines and no migration
	// request, or one Longhorn has not started (no engine beside the
	// active ones, none on the requested node): every sync fails on the
	// two engines, so the request waits on the repair, and Longhorn starts
	// it once one engine is active.
	CheckMigrationNotStarted = "no migration has started"
	CheckCurrentNode         = "current node is known and equals spec.nodeID"
	CheckNoMigrationInFlight = "no migration is in flight"
	CheckOneRunningEngine    = "one running engine on the current node"
	CheckStaleElsewhere      = "stale engines are on other nodes"
	CheckMigratableRWX       = "the volume is migratable rwx"
	CheckNoAttachPending     = "no attach is pending on another node"
	CheckRobustness          = "robustness is usable"
	CheckReplicasSettled     = "replicas are settled"
	CheckNoUpgrade           = "no engine upgrade is pending"
	// CheckNoExtraCleanup: 1.5.3+, no Longhorn path deletes extra healthy
	// replicas while a directory briefly has two active replicas.
	CheckNoExtraCleanup = "no extra-replica clean-up can run"
	// for a volume whose stale engine was deleted by hand
	CheckEngineOnCurrentNode = "the engine is on the current node"
	CheckRepointUsable       = "replicas to repoint are usable"
	// CheckWorkloadOnCurrentNode: the pods using the volume and its CSI
	// attachment are on status.currentNodeID, so the engine kept there is
	// the one serving the workload's I/O.
	CheckWorkloadOnCurrentNode = "the workload runs on the current node"
)

// FirstFailed is the check that refused a repair, nil when all passed.
func (f *Finding) FirstFailed() *Check { return firstFailed(f.Preconditions) }

// Evidence is what the finding rests on.
type Evidence struct {
	VolumeState            string `json:"volumeState,omitempty"`
	Robustness             string `json:"robustness,omitempty"`
	NodeID                 string `json:"nodeID"`
	CurrentNodeID          string `json:"currentNodeID"`
	MigrationNodeID        string `json:"migrationNodeID"`
	CurrentMigrationNodeID string `json:"currentMigrationNodeID,omitempty"`
	CurrentEngineNodeID    string `json:"currentEngineNodeID,omitempty"`
	EngineNodeID           string `json:"engineNodeID,omitempty"`
	SwitchoverState        string `json:"switchoverState,omitempty"`
	OwnerID                string `json:"ownerID,omitempty"`
	DataEngine             string `json:"dataEngine,omitempty"`
	Migratable             bool   `json:"migratable"`
	AccessMode             string `json:"accessMode,omitempty"`

	Engines  []EngineEvidence  `json:"engines"`
	Replicas []ReplicaEvidence `json:"replicas"`
	Tickets  []TicketEvidence  `json:"attachmentTickets,omitempty"`
	// EngineFrontends are a v2 volume's frontends (Longhorn 1.12+).
	EngineFrontends []EngineFrontendEvidence `json:"engineFrontends,omitempty"`
	// Kubernetes is volume.status.kubernetesStatus: who uses the volume.
	Kubernetes *KubernetesEvidence `json:"kubernetes,omitempty"`
	// Workload is where the volume's workload runs, read from Kubernetes
	// itself (pods and storage.k8s.io VolumeAttachments).
	Workload *WorkloadPlacement `json:"workload,omitempty"`
	// Logs is filled by offline analysis when manager logs show the BUG error.
	Logs *LogEvidence `json:"logs,omitempty"`
}

// EngineEvidence describes one engine of the volume.
type EngineEvidence struct {
	Name              string     `json:"name"`
	Role              string     `json:"role,omitempty"` // keep, stale, migration
	NodeID            string     `json:"nodeID"`
	Active            bool       `json:"active"`
	DeletionTimestamp *time.Time `json:"deletionTimestamp,omitempty"`
	State             string     `json:"state"`
	DesireState       string     `json:"desireState,omitempty"`
	Endpoint          string     `json:"endpoint,omitempty"`
	RWReplicas        int        `json:"rwReplicas"`
	InstanceManager   string     `json:"instanceManager,omitempty"`
	Image             string     `json:"image,omitempty"`
	OwnerID           string     `json:"ownerID,omitempty"`
	Created           time.Time  `json:"created"`
	// Address is status.ip:port, shown for v2 volumes: what an engine
	// frontend connects to.
	Address string `json:"address,omitempty"`
}

// EngineFrontendEvidence describes one engine frontend of a v2 volume.
type EngineFrontendEvidence struct {
	Name              string     `json:"name"`
	Role              string     `json:"role,omitempty"` // keep, stale
	NodeID            string     `json:"nodeID"`
	Active            bool       `json:"active"`
	DeletionTimestamp *time.Time `json:"deletionTimestamp,omitempty"`
	State             string     `json:"state"`
	DesireState       string     `json:"desireState,omitempty"`
	// EngineName and Target are the engine it should send I/O to
	// (spec.engineName, spec.targetIP:targetPort); ConnectedTo the address
	// it is connected to now (status.targetIP:targetPort).
	EngineName  string    `json:"engineName,omitempty"`
	Target      string    `json:"target,omitempty"`
	ConnectedTo string    `json:"connectedTo,omitempty"`
	Endpoint    string    `json:"endpoint,omitempty"`
	OwnerID     string    `json:"ownerID,omitempty"`
	Created     time.Time `json:"created"`
}

// ReplicaEvidence describes one replica of the volume.
type ReplicaEvidence struct {
	Name          string `json:"name"`
	NodeID        string `json:"nodeID"`
	EngineName    string `json:"engineName"`
	Active        bool   `json:"active"`
	State         string `json:"state"`
	DataDirectory string `json:"dataDirectory,omitempty"`
}

// TicketEvidence describes a VolumeAttachment ticket (Longhorn 1.5+).
type TicketEvidence struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	NodeID    string `json:"nodeID"`
	Satisfied bool   `json:"satisfied"`
}

// KubernetesEvidence names the PV, PVC and workloads using the volume, as
// Longhorn's kubernetes-pv controller last saw them.
type KubernetesEvidence struct {
	PVName    string             `json:"pvName,omitempty"`
	Namespace string             `json:"namespace,omitempty"`
	PVCName   string             `json:"pvcName,omitempty"`
	Workloads []WorkloadEvidence `json:"workloads,omitempty"`
}

// WorkloadEvidence is one pod using the volume and its owner.
type WorkloadEvidence struct {
	PodName      string `json:"podName,omitempty"`
	WorkloadName string `json:"workloadName,omitempty"`
	WorkloadType string `json:"workloadType,omitempty"`
}

// WorkloadPlacement is where the workload using a volume runs: its pods
// and Longhorn's CSI attachments of its PV. A *NotChecked field is set
// (to "not checked: <why>") when that kind of object was not read.
type WorkloadPlacement struct {
	Pods                     []PodEvidence           `json:"pods"`
	PodsNotChecked           string                  `json:"podsNotChecked,omitempty"`
	CSIAttachments           []CSIAttachmentEvidence `json:"csiAttachments"`
	CSIAttachmentsNotChecked string                  `json:"csiAttachmentsNotChecked,omitempty"`
}

// PodEvidence is one pod using the volume.
type PodEvidence struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	Phase     string `json:"phase"`
	// VMI is the KubeVirt VirtualMachineInstance of a virt-launcher pod.
	VMI string `json:"vmi,omitempty"`
}

// CSIAttachmentEvidence is one storage.k8s.io VolumeAttachment of the
// volume's PV by Longhorn's CSI driver.
type CSIAttachmentEvidence struct {
	Name     string `json:"name"`
	Node     string `json:"node"`
	Attached bool   `json:"attached"`
}

// PodNodes are the nodes of the pods that have not finished, in order, once each.
func (w *WorkloadPlacement) PodNodes() []string {
	if w == nil {
		return nil
	}
	var out []string
	for _, p := range w.Pods {
		if p.Phase != longhorn.PodSucceeded && p.Phase != longhorn.PodFailed {
			out = appendOnce(out, p.Node)
		}
	}
	return out
}

// CSINodes are the nodes of the attached CSI attachments, once each.
func (w *WorkloadPlacement) CSINodes() []string {
	if w == nil {
		return nil
	}
	var out []string
	for _, a := range w.CSIAttachments {
		if a.Attached {
			out = appendOnce(out, a.Node)
		}
	}
	return out
}

func appendOnce(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// WorkloadTypeVMI is the owner of a Harvester (KubeVirt) VM's pod.
const WorkloadTypeVMI = "VirtualMachineInstance"

// VM is the Harvester/KubeVirt VM using the volume, "" when none is known.
func (k *KubernetesEvidence) VM() string {
	if k == nil {
		return ""
	}
	for _, w := range k.Workloads {
		if w.WorkloadType == WorkloadTypeVMI && w.WorkloadName != "" {
			return w.WorkloadName
		}
	}
	return ""
}

// LogEvidence summarises BUG lines found in longhorn-manager logs.
type LogEvidence struct {
	Count     int       `json:"count"`
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
	Message   string    `json:"message"`
	Files     []string  `json:"files,omitempty"`
}

// Duration marshals as a Go duration string ("12m30s").
type Duration struct{ time.Duration }

// MarshalJSON writes the duration rounded to seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + d.Round(time.Second).String() + `"`), nil
}

// UnmarshalJSON reads what MarshalJSON writes ("12m30s"), so that a JSON
// report decodes back into a Finding; a bare number is taken as nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return json.Unmarshal(b, &d.Duration)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: %w", s, err)
	}
	d.Duration = v
	return nil
}
