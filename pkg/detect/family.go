package detect

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The stuck live-migration family (docs/troubleshooting-migration-family.md):
// states beside #6642 that hang a drain, each with an upstream issue, the
// releases it occurs on and the maintainers' own repair. Each rule lives in
// a file of its own (family_*.go); familyState tries them in order.
const (
	// TypeMigrationNeverConfirmed: both engines run and both csi tickets
	// are satisfied, but no workload is left on the old node (or only an
	// orphaned Kubernetes VolumeAttachment): nothing ever confirms
	// (longhorn#11149).
	TypeMigrationNeverConfirmed Type = "MigrationNeverConfirmed"
	// TypeStaleMigrationNodeID: status.currentMigrationNodeID is set on a
	// volume that is detached or detaching (longhorn#11479, #12238).
	TypeStaleMigrationNodeID Type = "StaleMigrationNodeID"
	// TypeMigrationWithoutNode: spec.migrationNodeID set while spec.nodeID
	// is empty (longhorn#8735).
	TypeMigrationWithoutNode Type = "MigrationWithoutNode"
	// TypeMigrationBlockedByTickets: tickets other than csi ones count
	// against the two-ticket limit of a migratable volume (longhorn#11555,
	// #11150).
	TypeMigrationBlockedByTickets Type = "MigrationBlockedByTickets"
	// TypeLeftoverAttachRequest: status.pendingNodeID or a longhorn-ui
	// ticket left over (longhorn#7994, #8339).
	TypeLeftoverAttachRequest Type = "LeftoverAttachRequest"
	// TypeUpgradeMigrationDeadlock: an engine upgrade pending while two
	// engines exist (longhorn#7833).
	TypeUpgradeMigrationDeadlock Type = "UpgradeMigrationDeadlock"
	// TypeMigrationReplicaChurn: the migration engine restarts for ever, or
	// its clone replicas inherited lastFailedAt (longhorn#11397, #7128,
	// #12311). Report only.
	TypeMigrationReplicaChurn Type = "MigrationReplicaChurn"
	// TypeConfirmWithoutEngine: before 1.5, a confirm landed while the
	// migration engine was off its node for a restart; Longhorn never
	// places it again and never finishes the confirm.
	TypeConfirmWithoutEngine Type = "ConfirmWithoutEngine"
	// TypeEnginesOnOneNode: a confirm or rollback Longhorn cannot finish
	// because two engines are on the node it switches to.
	TypeEnginesOnOneNode Type = "EnginesOnOneNode"
	// TypeEngineOffNode: an attached volume's one engine runs on another
	// node than status.currentNodeID, and Longhorn does not move it.
	TypeEngineOffNode Type = "EngineOffNode"
)

// FamilyTypes are the types of the stuck-migration family, in the order of
// docs/troubleshooting-migration-family.md.
var FamilyTypes = []Type{
	TypeMigrationNeverConfirmed, TypeStaleMigrationNodeID, TypeMigrationWithoutNode,
	TypeMigrationBlockedByTickets, TypeLeftoverAttachRequest, TypeUpgradeMigrationDeadlock,
	TypeMigrationReplicaChurn, TypeConfirmWithoutEngine, TypeEnginesOnOneNode, TypeEngineOffNode,
}

// FamilyDoc is the troubleshooting page of the family.
const FamilyDoc = "docs/troubleshooting-migration-family.md"

// FamilyInfo is what the project knows about a state of the family: the
// upstream issues, the releases it occurs on, whether the running release
// is one of them, and the maintainers' repair as commands to type.
type FamilyInfo struct {
	// Issues are upstream issues ("longhorn/longhorn#11149").
	Issues []string `json:"issues"`
	// Releases are the Longhorn releases the state occurs on ("1.5.0–1.9.1").
	Releases string `json:"releases"`
	// AffectedRelease: the running release is one of them (false when the
	// version is unknown or the release is outside the range).
	AffectedRelease bool `json:"affectedRelease"`
	// Steps are the maintainers' repair (for UpgradeMigrationDeadlock a
	// rollback run on Longhorn's own controllers first), in order: commands to run, or a
	// sentence where no command does it. Filled with this volume's names.
	Steps []string `json:"steps"`
	// Doc is the section of the troubleshooting page.
	Doc string `json:"doc"`
}

// familyState classifies the states of the family. It runs after the
// #6642 rows (two active engines, pending clean-up, dangling replicas) and
// before the migration rows, which it refines. ok is false when no rule
// matches; f is then unchanged.
func familyState(st *longhorn.State, idx *index, v *longhorn.Volume, f *Finding) bool {
	c := familyCtx{st: st, v: v, engines: idx.engines[v.Name], replicas: idx.replicas[v.Name], va: idx.vas[v.Name], ns: st.Namespace}
	for _, rule := range []func(*familyCtx, *Finding) bool{
		enginesOnOneNode,
		migrationWithoutNode,
		confirmWithoutEngine,
		upgradeMigrationDeadlock,
		migrationReplicaChurn,
		migrationNeverConfirmed,
		staleMigrationNodeID,
		leftoverAttachRequest,
		migrationBlockedByTickets,
		engineOffNode,
	} {
		if rule(&c, f) {
			if f.Stale == nil {
				f.Stale = []string{}
			}
			return true
		}
	}
	return false
}

// familyCtx is one volume as the family rules see it.
type familyCtx struct {
	st       *longhorn.State
	v        *longhorn.Volume
	engines  []*longhorn.Engine
	replicas []*longhorn.Replica
	va       *longhorn.VolumeAttachment
	ns       string
}

// engineOn is the one engine (not being deleted) with spec.nodeID node.
func (c *familyCtx) engineOn(node string) *longhorn.Engine { return engineOn(c.engines, node) }

// engineOn is the one engine of engines (not being deleted) with
// spec.nodeID node, or nil when there is none or more than one.
func engineOn(engines []*longhorn.Engine, node string) *longhorn.Engine {
	var found *longhorn.Engine
	for _, e := range engines {
		if node != "" && e.Spec.NodeID == node && !e.Deleting() {
			if found != nil {
				return nil
			}
			found = e
		}
	}
	return found
}

// inRange reports the running release within [lo, hi] (inclusive), each
// "1.5.0"-shaped; hi "" means no upper bound.
func (c *familyCtx) inRange(lo, hi string) bool {
	ver := c.st.Version
	if !ver.Known() {
		return false
	}
	if !atLeast(ver, lo) {
		return false
	}
	return hi == "" || !atLeast(ver, bump(hi))
}

func atLeast(ver longhorn.Version, s string) bool {
	p := longhorn.MustParseVersion("v" + s)
	return ver.AtLeast(p.Major, p.Minor, p.Patch)
}

// bump is the patch release after s.
func bump(s string) string {
	p := longhorn.MustParseVersion("v" + s)
	return fmt.Sprintf("%d.%d.%d", p.Major, p.Minor, p.Patch+1)
}

// kubectl is a kubectl command line in the Longhorn namespace.
func (c *familyCtx) kubectl(args string) string {
	ns := c.ns
	if ns == "" {
		ns = longhorn.DefaultNamespace
	}
	return "kubectl -n " + ns + " " + args
}

// set fills the finding of a family state.
func (c *familyCtx) set(f *Finding, t Type, sev Severity, reason string, k FamilyInfo, anchor string) {
	f.Type, f.Severity, f.Action, f.Reason = t, sev, ActionNone, reason
	k.Doc = FamilyDoc + "#" + anchor
	f.Family = &k
}

// setWait records a state of the family that the running release leaves by
// itself: informational, wait, with the steps should it last.
func (c *familyCtx) setWait(f *Finding, t Type, reason string, k FamilyInfo, anchor string) {
	c.set(f, t, SeverityInfo, reason, k, anchor)
	f.Action = ActionWait
}

// podsOn are the pods using the volume that have not finished and run on
// node; read reports whether pods were read for the volume's namespace.
func (c *familyCtx) podsOn(node string) (pods []longhorn.Pod, read bool) {
	w := &c.st.Workloads
	ns := c.v.Status.KubernetesStatus.Namespace
	if ns == "" || !w.PodsReadIn(ns) {
		return nil, false
	}
	for _, p := range w.PodsOf(c.v) {
		if !p.Terminal() && p.NodeName == node {
			pods = append(pods, p)
		}
	}
	return pods, true
}

// workloadPods are the pods using the volume that have not finished; read
// is false when pods were not read.
func (c *familyCtx) workloadPods() (pods []longhorn.Pod, read bool) {
	w := &c.st.Workloads
	ns := c.v.Status.KubernetesStatus.Namespace
	if ns == "" {
		// no PVC known: Longhorn sees no Kubernetes user; pods are read
		// when they were read at all
		return nil, w.PodsRead.Read
	}
	if !w.PodsReadIn(ns) {
		return nil, false
	}
	for _, p := range w.PodsOf(c.v) {
		if !p.Terminal() {
			pods = append(pods, p)
		}
	}
	return pods, true
}

// vmOf is the VMI a pod list names ("ns/name"), "" when none.
func vmOf(pods []longhorn.Pod) (ns, name string) {
	for _, p := range pods {
		if p.VMI != "" {
			return p.Namespace, p.VMI
		}
	}
	return "", ""
}

// stopWorkload is the step that stops the volume's workload: virtctl for
// a Harvester VM, else a sentence naming the PVC.
func (c *familyCtx) stopWorkload() (stop, start string) {
	ks := &c.v.Status.KubernetesStatus
	pods, _ := c.workloadPods()
	if ns, vmi := vmOf(pods); vmi != "" {
		return fmt.Sprintf("virtctl stop %s -n %s", vmi, ns), fmt.Sprintf("virtctl start %s -n %s", vmi, ns)
	}
	for _, w := range ks.WorkloadsStatus {
		if w.WorkloadType == WorkloadTypeVMI && w.WorkloadName != "" {
			return fmt.Sprintf("virtctl stop %s -n %s", w.WorkloadName, ks.Namespace), fmt.Sprintf("virtctl start %s -n %s", w.WorkloadName, ks.Namespace)
		}
	}
	who := "the workload using the volume"
	if ks.PVCName != "" {
		who = fmt.Sprintf("the workload using PVC %s/%s", ks.Namespace, ks.PVCName)
	}
	return "stop " + who + " (scale it to 0)", "start " + who + " again"
}

// csiAttachmentsCmd lists the volume's Kubernetes VolumeAttachments.
func (c *familyCtx) csiAttachmentsCmd() string {
	pv := c.v.Status.KubernetesStatus.PVName
	if pv == "" {
		pv = c.v.Name
	}
	return fmt.Sprintf("kubectl get volumeattachments.storage.k8s.io -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,PV:.spec.source.persistentVolumeName,ATTACHED:.status.attached | grep -e NAME -e %s", pv)
}

// tickets splits the volume's attachment tickets into csi and other ones.
func (c *familyCtx) tickets() (csi, other []longhorn.AttachmentTicket) {
	if c.va == nil {
		return nil, nil
	}
	for _, id := range longhorn.SortedKeys(c.va.Spec.AttachmentTickets) {
		t := c.va.Spec.AttachmentTickets[id]
		if t.ID == "" {
			t.ID = id
		}
		if t.Type == longhorn.AttacherTypeCSI {
			csi = append(csi, t)
		} else {
			other = append(other, t)
		}
	}
	return csi, other
}

func ticketList(ts []longhorn.AttachmentTicket) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s (%s on %s)", t.ID, t.Type, orNone(t.NodeID))
	}
	return strings.Join(parts, ", ")
}

// hasCSITicketFor: a csi-attacher ticket asks for node.
func (c *familyCtx) hasCSITicketFor(node string) bool {
	if c.va == nil {
		return false
	}
	for _, t := range c.va.CSITickets() {
		if t.NodeID == node {
			return true
		}
	}
	return false
}
