package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// The workload a finding hits, on Kubernetes' own API server: the VM and
// PVC it names, and the refusal when the VM does not run where Longhorn
// says the volume is served (status.currentNodeID, node-b in stuck()).

const workloadCheck = "the workload runs on the current node"

// finding is the part of `scan -o json` these tests read.
type finding struct {
	Volume        string  `json:"volume"`
	Type          string  `json:"type"`
	Severity      string  `json:"severity"`
	Action        string  `json:"action"`
	Reason        string  `json:"reason"`
	Preconditions []check `json:"preconditions"`
	Evidence      struct {
		Kubernetes struct {
			PVCName   string `json:"pvcName"`
			Namespace string `json:"namespace"`
		} `json:"kubernetes"`
		Workload struct {
			Pods []struct {
				Namespace, Name, Node, Phase, VMI string
			} `json:"pods"`
			PodsNotChecked string `json:"podsNotChecked"`
			CSIAttachments []struct {
				Name     string `json:"name"`
				Node     string `json:"node"`
				Attached bool   `json:"attached"`
			} `json:"csiAttachments"`
			CSIAttachmentsNotChecked string `json:"csiAttachmentsNotChecked"`
		} `json:"workload"`
	} `json:"evidence"`
}

type check struct {
	Name       string `json:"name"`
	OK         bool   `json:"ok"`
	NotChecked bool   `json:"notChecked"`
	Detail     string `json:"detail"`
	Failure    string `json:"failure"`
}

func oneFinding(t *testing.T, stdout string) finding {
	t.Helper()
	var rep struct {
		Findings []finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Findings) != 1 {
		t.Fatalf("want one finding: %v\n%s", err, stdout)
	}
	return rep.Findings[0]
}

func (f finding) check(t *testing.T, name string) check {
	t.Helper()
	for _, c := range f.Preconditions {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no check %q in %+v", name, f.Preconditions)
	return check{}
}

// A finding names its PVC and VM, in the table and in the JSON, with the
// node of each virt-launcher pod and of the CSI attachment; when they are
// on the current node, fix proceeds.
func TestFindingNamesPVCAndVM(t *testing.T) {
	ctx := begin(t)
	w := vmWorkload{vm: "vm-web", pvc: "vm-web-disk-0", podNodes: []string{testenv.NodeB}, attached: testenv.NodeB}
	create(ctx, t, withWorkload(stuck(), stuckVolume, w))
	createWorkload(ctx, t, stuckVolume, w)

	r := kubectl(ctx, t, "longhorn-engines", "scan", "-o", "wide")
	if r.Code != 1 || !strings.Contains(r.Stdout, "vm-web") || !strings.Contains(r.Stdout, "vm-web-disk-0") {
		t.Errorf("scan -o wide: want exit 1 and the VM and PVC:\n%v", r)
	}
	r = kubectl(ctx, t, "longhorn-engines", "scan", "-o", "json")
	f := oneFinding(t, r.Stdout)
	wl := f.Evidence.Workload
	if f.Evidence.Kubernetes.PVCName != w.pvc || len(wl.Pods) != 1 || wl.Pods[0].Node != testenv.NodeB || wl.Pods[0].VMI != w.vm ||
		len(wl.CSIAttachments) != 1 || wl.CSIAttachments[0].Node != testenv.NodeB || !wl.CSIAttachments[0].Attached {
		t.Errorf("evidence: %+v", f.Evidence)
	}
	if c := f.check(t, workloadCheck); !c.OK || c.NotChecked {
		t.Errorf("check %+v", c)
	}
	r = kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--dry-run=client")
	if r.Code != 0 || !strings.Contains(r.Stdout, stale) {
		t.Errorf("fix --dry-run=client with the VM on the current node: want the plan for %s:\n%v", stale, r)
	}
}

// If Longhorn's status is wrong about where the volume is served, the
// documented workaround kills the engine serving I/O. A VM pod, or the CSI
// attachment, on another node than status.currentNodeID makes fix refuse,
// say where the workload is, and change nothing.
func TestFixRefusesWhenWorkloadRunsElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    vmWorkload
		want string
	}{
		{"pod", vmWorkload{vm: "vm-a", pvc: "vm-a-disk-0", podNodes: []string{testenv.NodeA}, attached: testenv.NodeB},
			"pod " + vmNamespace + "/" + launcherPod("vm-a", 0) + " runs on node-a, not on the current node node-b"},
		{"csi attachment", vmWorkload{vm: "vm-c", pvc: "vm-c-disk-0", podNodes: []string{testenv.NodeB}, attached: testenv.NodeA},
			"volumeattachment.storage.k8s.io csi-" + stuckVolume + "-node-a attaches the volume to node-a, not to the current node node-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := begin(t)
			create(ctx, t, withWorkload(stuck(), stuckVolume, tc.w))
			createWorkload(ctx, t, stuckVolume, tc.w)
			before := resourceVersions(ctx, t)

			r := kubectl(ctx, t, "longhorn-engines", "scan", "-o", "json")
			f := oneFinding(t, r.Stdout)
			if c := f.check(t, workloadCheck); c.OK || !strings.Contains(c.Failure, tc.want) {
				t.Errorf("check %+v, want it to fail with %q", c, tc.want)
			}
			r = kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--yes", "--timeout", "30s")
			if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, tc.want) {
				t.Errorf("fix: want exit 1 (refused) saying %q:\n%v", tc.want, r)
			}
			testenv.AssertUnchanged(t, before, resourceVersions(ctx, t))
			if !engineActive(ctx, t, stale) {
				t.Errorf("%s was deactivated", stale)
			}
		})
	}
}

// On Harvester a VM live migration runs a virt-launcher pod on each node:
// it is in flight, not a repair, and fix changes nothing.
func TestVMIMigrationInFlight(t *testing.T) {
	ctx := begin(t)
	w := vmWorkload{vm: "vm-mig", pvc: "vm-mig-disk-0", podNodes: []string{testenv.NodeA, testenv.NodeB}}
	create(ctx, t, withWorkload(stuck(), stuckVolume, w))
	createWorkload(ctx, t, stuckVolume, w)
	before := resourceVersions(ctx, t)
	want := "a VM live migration of VMI " + vmNamespace + "/vm-mig is in flight (virt-launcher pods on node-a and node-b): not a repair"

	r := kubectl(ctx, t, "longhorn-engines", "scan", "-o", "json")
	f := oneFinding(t, r.Stdout)
	if f.Action != "none" || f.Severity != "warning" || !strings.Contains(f.Reason, want) {
		t.Errorf("finding %s/%s/%s: %s\nwant action none, severity warning, reason with %q", f.Type, f.Severity, f.Action, f.Reason, want)
	}
	r = kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--yes", "--timeout", "30s")
	if r.Code != 1 || !strings.Contains(r.Stdout+r.Stderr, "in flight") {
		t.Errorf("fix: want exit 1 and \"in flight\":\n%v", r)
	}
	testenv.AssertUnchanged(t, before, resourceVersions(ctx, t))
}
