package detect

import (
	"fmt"
	"slices"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The first repair of the family: clearing a stale
// status.currentMigrationNodeID (the KB's status patch), only where
// Longhorn's own controller of that release was run after it and converged
// with nothing lost, interrupted included (internal/realtest
// TestFamilyStaleMigrationNodeIDRepair). Lift the list only with such a run.
var staleCMNProven = []longhorn.Version{{Major: 1, Minor: 5, Patch: 3}}

// The preconditions of clearing a stale status.currentMigrationNodeID, in
// the order they are checked (docs/scan-report.md, "Preconditions").
const (
	CheckRepairProven    = "the repair is proven on this release"
	CheckVolumeDetached  = "the volume is detached"
	CheckNoAttachRequest = "no attachment ticket asks for the volume"
	CheckNoWorkload      = "no workload uses the volume"
)

// provenOn reports whether ver is one of the releases a repair is proven on.
func provenOn(proven []longhorn.Version, ver longhorn.Version) bool {
	return ver.Known() && slices.ContainsFunc(proven, func(p longhorn.Version) bool {
		return ver.Major == p.Major && ver.Minor == p.Minor && ver.Patch == p.Patch
	})
}

// versionList names the releases a repair is proven on.
func versionList(vs []longhorn.Version) string {
	parts := make([]string, len(vs))
	for i, p := range vs {
		parts[i] = p.String()
	}
	return strings.Join(parts, ", ")
}

// staleCMNRepair decides whether fix clears the field of a
// StaleMigrationNodeID finding on an affected release: every precondition
// is recorded; the action is set only when all hold. The write touches no
// engine or replica; it is safe only while nothing runs or asks for the
// volume, so that Longhorn's next attach starts from a volume that is not
// migrating.
func staleCMNRepair(c *familyCtx, f *Finding) {
	v, ver := c.v, c.st.Version
	var cs checks
	cs.versionKnown(c.st)
	cs.add(CheckRepairProven, provenOn(staleCMNProven, ver),
		fmt.Sprintf("clearing status.currentMigrationNodeID is proven on the own controller of Longhorn %s only, not on %s: fix does not write, follow the steps by hand (%s)",
			versionList(staleCMNProven), ver, FamilyDoc+"#stale-currentmigrationnodeid"),
		fmt.Sprintf("Longhorn %s (proven on %s)", ver, versionList(staleCMNProven)))
	cs.add(CheckNoMigrationRequested, v.Spec.MigrationNodeID == "",
		fmt.Sprintf("spec.migrationNodeID is %s: a migration is requested", v.Spec.MigrationNodeID),
		fmt.Sprintf("spec.migrationNodeID %q", v.Spec.MigrationNodeID))

	running := []string{}
	for _, e := range c.engines {
		if e.Status.CurrentState == longhorn.StateRunning {
			running = append(running, e.Name)
		}
	}
	detached := v.Status.State == longhorn.VolumeStateDetached && v.Spec.NodeID == "" && v.Status.CurrentNodeID == "" && len(running) == 0
	cs.add(CheckVolumeDetached, detached,
		fmt.Sprintf("the volume is %s (spec.nodeID %q, status.currentNodeID %q, running engines: %s): fix clears the field only on a detached volume; look again once it is detached",
			orNone(v.Status.State), v.Spec.NodeID, v.Status.CurrentNodeID, orNone(strings.Join(running, ", "))),
		fmt.Sprintf("state %s, spec.nodeID %q, status.currentNodeID %q, no engine running", orNone(v.Status.State), v.Spec.NodeID, v.Status.CurrentNodeID))

	csi, other := c.tickets()
	switch {
	case c.va == nil && ver.HasVolumeAttachments():
		cs.add(CheckNoAttachRequest, false, "the volume's VolumeAttachment was not read: whether anything asks for the volume is unknown", "could not check: no VolumeAttachment read")
	case c.va == nil:
		cs.add(CheckNoAttachRequest, true, "", "no VolumeAttachment before Longhorn 1.5")
	case len(c.va.Spec.AttachmentTickets) > 0:
		all := append(csi, other...)
		cs.add(CheckNoAttachRequest, false,
			fmt.Sprintf("attachment tickets ask for the volume (%s): stop the workload first", ticketList(all)),
			ticketList(all))
	default:
		cs.add(CheckNoAttachRequest, true, "", "no attachment ticket")
	}
	c.noWorkload(&cs)

	f.Preconditions = cs
	if failed := firstFailed(cs); failed != nil {
		f.Reason += "; fix does not clear it: " + failed.Failure
		return
	}
	f.Action = ActionClearMigrationNode
	f.Reason = fmt.Sprintf("status.currentMigrationNodeID is %s on a detached volume (no migration requested, nothing asks for it): Longhorn %s treats it as migrating and keeps the field while the volume stays detached; fix clears it on the status subresource, pinned to the volume's uid and resourceVersion (the KB's patch)",
		v.Status.CurrentMigrationNodeID, ver)
}

// noWorkload is CheckNoWorkload: no pod using the volume has not finished
// and no CSI attachment of its PV is attached. What was not read (no
// permission, not served, not in the bundle) passes as not checked, as the
// tickets already say whether the CSI driver asks for the volume; a read
// that failed refuses.
func (c *familyCtx) noWorkload(cs *checks) {
	w, v := &c.st.Workloads, c.v
	var observed, notChecked, failures []string
	podNote := podsNotRead(w, v)
	switch {
	case podNote != "" && w.PodsRead.Failed:
		failures = append(failures, "the pods could not be read: "+w.PodsRead.Note)
	case podNote != "":
		notChecked = append(notChecked, podNote)
		if ks := v.Status.KubernetesStatus; len(ks.WorkloadsStatus) > 0 && ks.LastPodRefAt == "" {
			// Longhorn's own record of the pods using the volume
			failures = append(failures, fmt.Sprintf("Longhorn records pod %s using the volume", ks.WorkloadsStatus[0].PodName))
		}
	default:
		n := 0
		for _, p := range w.PodsOf(v) {
			if p.Terminal() {
				continue
			}
			n++
			failures = append(failures, fmt.Sprintf("pod %s/%s (on %s) uses the volume", p.Namespace, p.Name, orNone(p.NodeName)))
		}
		if n == 0 {
			observed = append(observed, "no running pod uses it")
		}
	}
	switch {
	case !w.CSIRead.Read && w.CSIRead.Failed:
		failures = append(failures, "the CSI attachments could not be read: "+w.CSIRead.Note)
	case !w.CSIRead.Read:
		notChecked = append(notChecked, noteOf(w.CSIRead, "CSI attachments not read"))
	default:
		n := 0
		for _, a := range w.CSIAttachmentsOf(v) {
			if a.Attached {
				n++
				failures = append(failures, fmt.Sprintf("volumeattachment.storage.k8s.io %s attaches it to %s", a.Name, orNone(a.NodeName)))
			}
		}
		if n == 0 {
			observed = append(observed, "no attached CSI attachment")
		}
	}
	detail := checkDetail(observed, notChecked)
	if len(failures) > 0 {
		cs.add(CheckNoWorkload, false, strings.Join(failures, "; ")+": stop the workload first", detail)
		return
	}
	cs.add(CheckNoWorkload, true, "", detail)
	if len(notChecked) > 0 {
		(*cs)[len(*cs)-1].NotChecked = true
	}
}
