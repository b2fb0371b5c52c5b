// Package preflight implements `kubectl longhorn-engines preflight`: before
// a Longhorn or Harvester upgrade, say whether the running release (and the
// target) can leave volumes with two active engines (longhorn#6642), which
// volumes will live-migrate when nodes are drained, what blocks a drain
// today and the command that resolves it, and how to guard the window. It
// only reads.
package preflight

import (
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// ReportKind is the kind of preflight's report (docs/preflight.md documents
// the schema; cmdutil.ReportAPIVersion its version).
const ReportKind = "PreflightReport"

// Report is what `preflight -o json|yaml` prints.
type Report struct {
	cmdutil.ReportMeta
	Namespace string `json:"namespace"`
	Source    string `json:"source"`
	// Verdict is ready, attention or unchecked (exit 0, 1, 2).
	Verdict Verdict `json:"verdict"`
	Release Release `json:"release"`
	// Target is the --to release; absent without --to.
	Target  *Target `json:"target,omitempty"`
	Summary Summary `json:"summary"`
	// Nodes lists, per node, the volumes a drain of that node live-migrates.
	Nodes    []NodeVolumes `json:"nodes"`
	Blockers []Blocker     `json:"blockers"`
	// Drain says, per node, what holds its instance-manager
	// PodDisruptionBudget: the processes and the findings behind them.
	Drain []detect.NodeDrain `json:"drain"`
	// Unchecked names what could not be checked (then the verdict is unchecked).
	Unchecked      []string       `json:"unchecked"`
	Recommendation Recommendation `json:"recommendation"`
}

// Verdict sums the report up; it decides the exit code.
type Verdict string

const (
	VerdictReady     Verdict = "ready"     // nothing blocks the upgrade
	VerdictAttention Verdict = "attention" // something must be resolved first
	VerdictUnchecked Verdict = "unchecked" // something could not be checked
)

// Release is what the running Longhorn release means for longhorn#6642.
type Release struct {
	Version string `json:"version"`
	// Class is the support-matrix class (L13, L14a, L14f, L15a, L15f, ...).
	Class string `json:"class"`
	// Affected: a live migration on this release can leave two active engines.
	Affected bool `json:"affected"`
	// Repair is what `fix` does on this release: deactivate, delete or none.
	Repair detect.Action `json:"repair"`
	Note   string        `json:"note"`
}

// Target is the upgrade target (--to).
type Target struct {
	Release
	// Fixes: the running release is affected and the target is not.
	Fixes bool `json:"fixes"`
	// StuckStayStuck is always true: no release repairs two active engines
	// by itself, so volumes stuck before the upgrade are stuck after it.
	StuckStayStuck bool   `json:"stuckStayStuck"`
	StuckNote      string `json:"stuckNote"`
	// Path lists the minor releases an upgrade must pass through, with the
	// patch releases to choose there.
	Path []string `json:"path,omitempty"`
}

// Summary counts what the report saw.
type Summary struct {
	Volumes int `json:"volumes"`
	// Attached volumes; of those, Migrating will live-migrate during drains.
	Attached  int `json:"attached"`
	Migrating int `json:"migrating"`
	// InFinding: migrating volumes that scan already reports.
	InFinding int `json:"inFinding"`
	Blockers  int `json:"blockers"`
	// Exposed: some volume can reach the two-active-engines state during
	// this upgrade (an affected release runs, or will, and volumes migrate).
	// null when that cannot be told (the running release is unknown and
	// volumes migrate): unknown is never reported as no.
	Exposed *bool `json:"exposed"`
}

// NodeVolumes is one node and the volumes a drain of it live-migrates.
type NodeVolumes struct {
	Node    string            `json:"node"`
	Volumes []MigratingVolume `json:"volumes"`
}

// MigratingVolume is an attached, migratable rwx volume.
type MigratingVolume struct {
	Name       string `json:"name"`
	DataEngine string `json:"dataEngine"`
	Robustness string `json:"robustness,omitempty"`
	// PVC is namespace/name from status.kubernetesStatus, when known.
	PVC       string     `json:"pvc,omitempty"`
	Workloads []Workload `json:"workloads"`
	// Finding is scan's classification, when the volume has one.
	Finding *FindingRef `json:"finding,omitempty"`
}

// Workload is a pod using the volume and, when known, its owner (a KubeVirt
// VirtualMachineInstance for a VM disk).
type Workload struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
}

// FindingRef is the short form of a scan finding.
type FindingRef struct {
	Type     detect.Type     `json:"type"`
	Severity detect.Severity `json:"severity"`
	Action   detect.Action   `json:"action"`
}

// Blocker is a state that blocks a drain today, with what resolves it.
type Blocker struct {
	Volume   string          `json:"volume"`
	Node     string          `json:"node,omitempty"`
	Type     detect.Type     `json:"type"`
	Severity detect.Severity `json:"severity"`
	// Problem says in a few words what blocks.
	Problem string `json:"problem"`
	// Command resolves it; Resolve says what to do when no single command does.
	Command string `json:"command,omitempty"`
	Resolve string `json:"resolve"`
	// Family is set for a state of the stuck-migration family: its
	// upstream issues, releases and the maintainers' repair steps.
	Family *detect.FamilyInfo `json:"family,omitempty"`
}

// Recommendation is what to do before and during the upgrade window.
type Recommendation struct {
	Steps []string `json:"steps"`
	// GuardCommand is the upgrade guard to run, when one is needed.
	GuardCommand string `json:"guardCommand,omitempty"`
	// GuardRBAC is what the guard needs (docs/rbac.md, deploy/rbac-guard.yaml).
	GuardRBAC string `json:"guardRBAC,omitempty"`
}
