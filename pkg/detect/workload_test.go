package detect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// withWorkloads gives the stuck volume a PVC and marks pods and CSI
// attachments as read, with the given objects.
func withWorkloads(s *scenario, pods []longhorn.Pod, vas []longhorn.CSIAttachment) {
	v := s.volume()
	v.Status.KubernetesStatus = longhorn.KubernetesStatus{PVName: s.vol, PVCName: "disk-1", Namespace: "default"}
	s.st.Workloads = longhorn.Workloads{
		Pods: pods, PodsRead: longhorn.ReadStatus{Read: true},
		CSIAttachments: vas, CSIRead: longhorn.ReadStatus{Read: true},
	}
}

func pod(name, node, phase string) longhorn.Pod {
	return longhorn.Pod{Namespace: "default", Name: name, NodeName: node, Phase: phase, Claims: []string{"disk-1"}}
}

func launcher(name, vmi, node string) longhorn.Pod {
	p := pod(name, node, "Running")
	p.VirtLauncher, p.VMI, p.OwnerKind, p.OwnerName = true, vmi, longhorn.KindVMI, vmi
	return p
}

func csi(name, pv, node string) longhorn.CSIAttachment {
	return longhorn.CSIAttachment{Name: name, Attacher: longhorn.CSIDriver, PVName: pv, NodeName: node, Attached: true}
}

func classifyOne(t *testing.T, s *scenario) Finding {
	t.Helper()
	f, ok := ClassifyVolume(s.st, s.vol, Options{})
	if !ok {
		t.Fatal("no finding")
	}
	return f
}

func workloadCheck(t *testing.T, f Finding) Check {
	t.Helper()
	c, ok := findCheck(f, CheckWorkloadOnCurrentNode)
	if !ok {
		t.Fatalf("no %q check: %s", CheckWorkloadOnCurrentNode, mustJSON(f.Preconditions))
	}
	return c
}

func TestWorkloadOnAnotherNodeRefuses(t *testing.T) {
	for _, vc := range affectedVersions {
		t.Run(vc.name, func(t *testing.T) {
			s := stuck(vc, "vol")
			withWorkloads(s, []longhorn.Pod{launcher("virt-launcher-vm1-abcde", "vm1", nodeA)}, nil)
			f := classifyOne(t, s)
			c := workloadCheck(t, f)
			want := "pod default/virt-launcher-vm1-abcde runs on node-a, not on the current node node-b"
			if c.OK || c.Failure != want || c.NotChecked {
				t.Fatalf("check = %+v, want failed with %q", c, want)
			}
			if f.Action != ActionNone || !f.Refused() || !strings.Contains(f.Reason, "not safe to repair because "+want) {
				t.Errorf("a repair is still proposed: action %s, reason %s", f.Action, f.Reason)
			}
			w := f.Evidence.Workload
			if w == nil || len(w.Pods) != 1 || w.Pods[0].Node != nodeA || w.Pods[0].VMI != "vm1" || w.PodsNotChecked != "" {
				t.Errorf("evidence: %s", mustJSON(w))
			}
		})
	}
}

func TestCSIAttachmentOnAnotherNodeRefuses(t *testing.T) {
	s := stuck(vcL14a, "vol")
	withWorkloads(s, nil, []longhorn.CSIAttachment{
		csi("csi-0123", "vol", nodeA),
		// another driver's, and another PV's: ignored
		{Name: "csi-other", Attacher: "other.csi.example.com", PVName: "vol", NodeName: nodeA, Attached: true},
		csi("csi-9999", "pvc-other", nodeA),
	})
	f := classifyOne(t, s)
	c := workloadCheck(t, f)
	want := "volumeattachment.storage.k8s.io csi-0123 attaches the volume to node-a, not to the current node node-b"
	if c.OK || c.Failure != want {
		t.Fatalf("check = %+v, want %q", c, want)
	}
	if f.Action != ActionNone {
		t.Errorf("action %s", f.Action)
	}
	if w := f.Evidence.Workload; len(w.CSIAttachments) != 1 || w.CSIAttachments[0].Name != "csi-0123" {
		t.Errorf("evidence: %s", mustJSON(w))
	}

	// Matched by kubernetesStatus.pvName too, when the PV is not named
	// after the volume.
	s = stuck(vcL14a, "vol")
	withWorkloads(s, nil, []longhorn.CSIAttachment{csi("csi-0123", "pv-static", nodeA)})
	s.volume().Status.KubernetesStatus.PVName = "pv-static"
	if c := workloadCheck(t, classifyOne(t, s)); c.OK {
		t.Errorf("attachment of kubernetesStatus.pvName not matched: %+v", c)
	}
}

func TestWorkloadOnCurrentNodePasses(t *testing.T) {
	s := stuck(vcL14a, "vol")
	withWorkloads(s, []longhorn.Pod{
		pod("app-0", nodeB, "Running"),
		pod("old-job", nodeA, longhorn.PodSucceeded), // terminal: ignored
		pod("crashed", nodeA, longhorn.PodFailed),    // terminal: ignored
		{Namespace: "other", Name: "app-0", NodeName: nodeA, Phase: "Running", Claims: []string{"disk-1"}}, // another namespace
		{Namespace: "default", Name: "unrelated", NodeName: nodeA, Phase: "Running", Claims: []string{"disk-2"}},
	}, []longhorn.CSIAttachment{csi("csi-0123", "vol", nodeB), {Name: "csi-detached", Attacher: longhorn.CSIDriver, PVName: "vol", NodeName: nodeA}})
	f := classifyOne(t, s)
	c := workloadCheck(t, f)
	if !c.OK || c.NotChecked || !strings.Contains(c.Detail, "pod default/app-0 on node-b") || !strings.Contains(c.Detail, "CSI attachment csi-0123 on node-b") {
		t.Fatalf("check = %+v", c)
	}
	if f.Action != ActionDeactivate {
		t.Errorf("action %s, reason %s", f.Action, f.Reason)
	}
	if got := f.Evidence.Workload.PodNodes(); len(got) != 1 || got[0] != nodeB {
		t.Errorf("pod nodes %v (terminal pods must not count)", got)
	}
}

func TestWorkloadMatchedByWorkloadsStatusPodName(t *testing.T) {
	s := stuck(vcL14a, "vol")
	p := pod("legacy-0", nodeA, "Running")
	p.Claims = nil // e.g. the volume reached through another claim name
	withWorkloads(s, []longhorn.Pod{p}, nil)
	s.volume().Status.KubernetesStatus.WorkloadsStatus = []longhorn.WorkloadStatus{{PodName: "legacy-0"}}
	if c := workloadCheck(t, classifyOne(t, s)); c.OK {
		t.Errorf("pod named in workloadsStatus not matched: %+v", c)
	}
}

func TestVMLiveMigrationInFlightIsNotARepair(t *testing.T) {
	s := stuck(vcL14a, "vol")
	withWorkloads(s, []longhorn.Pod{
		launcher("virt-launcher-vm1-abcde", "vm1", nodeA),
		launcher("virt-launcher-vm1-fghij", "vm1", nodeB),
	}, nil)
	f := classifyOne(t, s)
	c := workloadCheck(t, f)
	want := "a VM live migration of VMI default/vm1 is in flight (virt-launcher pods on node-a and node-b): not a repair; wait for it to finish"
	if c.OK || c.Failure != want {
		t.Fatalf("check = %+v, want %q", c, want)
	}
	if f.Action != ActionNone || !strings.HasPrefix(f.Reason, want) || f.Severity != SeverityWarning {
		t.Errorf("finding: severity %s, action %s, reason %s", f.Severity, f.Action, f.Reason)
	}
	if f.Type != TypeMultipleActiveEngines {
		t.Errorf("type %s", f.Type)
	}

	// The VMI name from the vm.kubevirt.io/name label works the same (the
	// reader fills VMI from either); a finished source pod ends it.
	s = stuck(vcL14a, "vol")
	done := launcher("virt-launcher-vm1-abcde", "vm1", nodeA)
	done.Phase = longhorn.PodSucceeded
	withWorkloads(s, []longhorn.Pod{done, launcher("virt-launcher-vm1-fghij", "vm1", nodeB)}, nil)
	if c := workloadCheck(t, classifyOne(t, s)); !c.OK {
		t.Errorf("finished source pod still counts: %+v", c)
	}
}

func TestWorkloadNotReadPassesAsNotChecked(t *testing.T) {
	s := stuck(vcL14a, "vol")
	withWorkloads(s, nil, nil)
	s.st.Workloads.PodsRead = longhorn.ReadStatus{Note: "cannot list pods (forbidden)", Hint: "grant the optional ClusterRole longhorn-engines-workloads"}
	s.st.Workloads.CSIRead = longhorn.ReadStatus{Note: "volumeattachments.storage.k8s.io are not served by this API server"}
	f := classifyOne(t, s)
	c := workloadCheck(t, f)
	if !c.OK || !c.NotChecked || !strings.HasPrefix(c.Detail, NotCheckedPrefix+"cannot list pods (forbidden); grant the optional ClusterRole longhorn-engines-workloads") {
		t.Fatalf("check = %+v", c)
	}
	if f.Action != ActionDeactivate {
		t.Errorf("not checked must not refuse: action %s, %s", f.Action, f.Reason)
	}
	b, _ := json.Marshal(c)
	if !strings.Contains(string(b), `"notChecked":true`) {
		t.Errorf("JSON does not say it was not checked: %s", b)
	}
	w := f.Evidence.Workload
	if !strings.HasPrefix(w.PodsNotChecked, NotCheckedPrefix+"cannot list pods") || !strings.HasPrefix(w.CSIAttachmentsNotChecked, NotCheckedPrefix) {
		t.Errorf("evidence: %s", mustJSON(w))
	}

	// Pods read, but not in the PVC's namespace (a bundle): not checked
	// either, while the CSI attachment that was read still decides.
	s = stuck(vcL14a, "vol")
	withWorkloads(s, nil, []longhorn.CSIAttachment{csi("csi-0123", "vol", nodeA)})
	s.st.Workloads.PodNamespaces = map[string]bool{"longhorn-system": true}
	s.st.Workloads.PodNamespacesNote = "not in the bundle"
	c = workloadCheck(t, classifyOne(t, s))
	if c.OK || !strings.Contains(c.Detail, "pods of namespace default not in the bundle") {
		t.Errorf("check = %+v", c)
	}
}

func TestWorkloadReadFailureRefuses(t *testing.T) {
	s := stuck(vcL14a, "vol")
	withWorkloads(s, nil, nil)
	s.st.Workloads.PodsRead = longhorn.ReadStatus{Failed: true, Note: "cannot list pods (the server is currently unable to handle the request)"}
	f := classifyOne(t, s)
	c := workloadCheck(t, f)
	if c.OK || c.NotChecked || c.Failure != "where the workload runs could not be checked: cannot list pods (the server is currently unable to handle the request)" {
		t.Fatalf("check = %+v", c)
	}
	if f.Action != ActionNone {
		t.Errorf("a failed read must refuse: %s", f.Action)
	}
}

func TestDanglingReplicasCheckTheWorkload(t *testing.T) {
	s := stuck(vcL14a, "vol")
	s.volume().Status.CurrentMigrationNodeID = ""
	s.removeEngine(s.engA)
	withWorkloads(s, []longhorn.Pod{pod("app-0", nodeA, "Running")}, nil)
	f := classifyOne(t, s)
	if f.Type != TypeDanglingReplicas {
		t.Fatalf("type %s", f.Type)
	}
	if c := workloadCheck(t, f); c.OK || f.Action != ActionNone {
		t.Errorf("repointing replicas while the pod runs on node-a: check %+v, action %s", c, f.Action)
	}
}
