package detect

import (
	"fmt"
	"sort"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// NotCheckedPrefix starts the detail of a check (and the *NotChecked
// evidence fields) that passed only because its input was not read.
const NotCheckedPrefix = "not checked: "

// placement is the workload evidence of v from what was read.
func placement(w *longhorn.Workloads, v *longhorn.Volume) *WorkloadPlacement {
	p := &WorkloadPlacement{Pods: []PodEvidence{}, CSIAttachments: []CSIAttachmentEvidence{}}
	if note := podsNotRead(w, v); note != "" {
		p.PodsNotChecked = NotCheckedPrefix + note
	} else {
		for _, pod := range w.PodsOf(v) {
			p.Pods = append(p.Pods, PodEvidence{Namespace: pod.Namespace, Name: pod.Name, Node: pod.NodeName, Phase: pod.Phase, VMI: pod.VMI})
		}
	}
	if !w.CSIRead.Read {
		p.CSIAttachmentsNotChecked = NotCheckedPrefix + noteOf(w.CSIRead, "CSI attachments not read")
	} else {
		for _, a := range w.CSIAttachmentsOf(v) {
			p.CSIAttachments = append(p.CSIAttachments, CSIAttachmentEvidence{Name: a.Name, Node: a.NodeName, Attached: a.Attached})
		}
	}
	return p
}

// podsNotRead says why the pods of v's PVC namespace were not read, "" when
// they were, or when Longhorn records no PVC namespace: pods are matched in
// that namespace only, so there is nothing to read (and a named-volume read
// reads none).
func podsNotRead(w *longhorn.Workloads, v *longhorn.Volume) string {
	ns := v.Status.KubernetesStatus.Namespace
	switch {
	case ns == "":
		return ""
	case !w.PodsRead.Read:
		return noteOf(w.PodsRead, "pods not read")
	case ns != "" && !w.PodsReadIn(ns):
		if w.PodNamespacesNote != "" {
			return fmt.Sprintf("pods of namespace %s %s", ns, w.PodNamespacesNote)
		}
		return fmt.Sprintf("pods of namespace %s not read", ns)
	}
	return ""
}

func noteOf(r longhorn.ReadStatus, dflt string) string {
	n := r.Note
	if n == "" {
		n = dflt
	}
	if r.Hint != "" {
		n += "; " + r.Hint
	}
	return n
}

// workloadOnCurrentNode is CheckWorkloadOnCurrentNode: every pod using the
// volume that has not finished, and every attached CSI attachment of its
// PV, is on status.currentNodeID. Longhorn's currentNodeID decides which
// engine is kept; if the workload runs elsewhere, that engine is not the one
// serving its I/O and removing the other would cut the workload off.
//
// virt-launcher pods of one VMI on two nodes are a KubeVirt live migration
// in flight: not a repair. What was not read (no permission, not served,
// not in the bundle) passes as not checked; a read that failed otherwise
// refuses.
func (cs *checks) workloadOnCurrentNode(st *longhorn.State, v *longhorn.Volume) {
	w := &st.Workloads
	cur := v.Status.CurrentNodeID
	var observed, notChecked, failures []string
	failedRead := ""

	podNote := podsNotRead(w, v)
	switch {
	case podNote != "" && w.PodsRead.Failed:
		failedRead = w.PodsRead.Note
	case podNote != "":
		notChecked = append(notChecked, podNote)
	default:
		var live []longhorn.Pod
		for _, p := range w.PodsOf(v) {
			if !p.Terminal() {
				live = append(live, p)
			}
		}
		if m := vmMigration(live); m != "" {
			cs.add(CheckWorkloadOnCurrentNode, false, m, m)
			return
		}
		for _, p := range live {
			observed = append(observed, fmt.Sprintf("pod %s/%s on %s", p.Namespace, p.Name, orNone(p.NodeName)))
			if p.NodeName != "" && p.NodeName != cur {
				failures = append(failures, fmt.Sprintf("pod %s/%s runs on %s, not on the current node %s", p.Namespace, p.Name, p.NodeName, orNone(cur)))
			}
		}
		switch {
		case v.Status.KubernetesStatus.Namespace == "":
			observed = append(observed, "no PVC in status.kubernetesStatus, no pod to match")
		case len(live) == 0:
			observed = append(observed, "no running pod uses it")
		}
	}
	switch {
	case !w.CSIRead.Read && w.CSIRead.Failed:
		if failedRead == "" {
			failedRead = w.CSIRead.Note
		}
	case !w.CSIRead.Read:
		notChecked = append(notChecked, noteOf(w.CSIRead, "CSI attachments not read"))
	default:
		n := 0
		for _, a := range w.CSIAttachmentsOf(v) {
			if !a.Attached {
				continue
			}
			n++
			observed = append(observed, fmt.Sprintf("CSI attachment %s on %s", a.Name, orNone(a.NodeName)))
			if a.NodeName != cur {
				failures = append(failures, fmt.Sprintf("volumeattachment.storage.k8s.io %s attaches the volume to %s, not to the current node %s", a.Name, orNone(a.NodeName), orNone(cur)))
			}
		}
		if n == 0 {
			observed = append(observed, "no attached CSI attachment")
		}
	}

	detail := checkDetail(observed, notChecked)
	switch {
	case len(failures) > 0:
		cs.add(CheckWorkloadOnCurrentNode, false, strings.Join(failures, "; "), detail)
	case failedRead != "":
		cs.add(CheckWorkloadOnCurrentNode, false,
			"where the workload runs could not be checked: "+failedRead, "could not check: "+failedRead)
	default:
		cs.add(CheckWorkloadOnCurrentNode, true, "", detail)
		(*cs)[len(*cs)-1].NotChecked = len(notChecked) > 0
	}
}

// checkDetail is a workload check's detail: what was observed, or, when
// part of it could not be checked, what was not (NotCheckedPrefix) with
// what was checked in parentheses.
func checkDetail(observed, notChecked []string) string {
	detail := strings.Join(observed, ", ")
	if len(notChecked) == 0 {
		return detail
	}
	nc := NotCheckedPrefix + strings.Join(notChecked, "; ")
	if detail != "" {
		nc += " (checked: " + detail + ")"
	}
	return nc
}

// vmMigration describes a KubeVirt live migration in flight: the
// virt-launcher pods of one VMI, not finished, on two or more nodes. "" when
// there is none.
func vmMigration(pods []longhorn.Pod) string {
	nodes := map[string][]string{}
	var vmis []string
	for _, p := range pods {
		if !p.VirtLauncher || p.VMI == "" || p.NodeName == "" {
			continue
		}
		k := p.Namespace + "/" + p.VMI
		if _, ok := nodes[k]; !ok {
			vmis = append(vmis, k)
		}
		nodes[k] = appendOnce(nodes[k], p.NodeName)
	}
	sort.Strings(vmis)
	for _, k := range vmis {
		if ns := nodes[k]; len(ns) > 1 {
			sort.Strings(ns)
			return fmt.Sprintf("a VM live migration of VMI %s is in flight (virt-launcher pods on %s): not a repair; wait for it to finish",
				k, strings.Join(ns, " and "))
		}
	}
	return ""
}

// vmMigrationFailure is the failure of the workload check when it is a VM
// live migration in flight, "" otherwise.
func vmMigrationFailure(cs []Check) string {
	for _, c := range cs {
		if c.Name == CheckWorkloadOnCurrentNode && !c.OK && strings.HasPrefix(c.Failure, "a VM live migration of VMI ") {
			return c.Failure
		}
	}
	return ""
}
