package detect

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

var vc153 = versionCase{"1.5.3", "v1.5.3", false}

// staleCM is a detached volume with a stale status.currentMigrationNodeID
// and a VolumeAttachment without tickets: nothing asks for it.
func staleCM(vc versionCase) *scenario {
	s := healthy(vc, "vol-cm")
	v := s.volume()
	v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.State = "", "", longhorn.VolumeStateDetached
	v.Status.CurrentMigrationNodeID = nodeB
	s.engine(s.engA).Spec.NodeID = ""
	s.engine(s.engA).Status.CurrentState = longhorn.StateStopped
	s.withTickets(nil)
	return s
}

// On Longhorn 1.5.3, the release whose own controller was run after the
// repair, a detached volume nothing asks for is repaired: one action,
// clear-migration-node, with every precondition recorded and passed.
func TestStaleMigrationNodeIDRepair(t *testing.T) {
	s := staleCM(vc153)
	_, f := s.classify(t)
	if f.Type != TypeStaleMigrationNodeID || f.Action != ActionClearMigrationNode || f.Refused() {
		t.Fatalf("%s/%s refused=%t, want StaleMigrationNodeID/clear-migration-node: %s", f.Type, f.Action, f.Refused(), f.Reason)
	}
	if !f.Family.AffectedRelease || f.Severity != SeverityWarning || !strings.Contains(f.Reason, "fix clears it on the status subresource") {
		t.Errorf("affected %t, severity %s, reason %q", f.Family.AffectedRelease, f.Severity, f.Reason)
	}
	want := []string{CheckVersionKnown, CheckRepairProven, CheckNoMigrationRequested, CheckVolumeDetached, CheckNoAttachRequest, CheckNoWorkload}
	if len(f.Preconditions) != len(want) {
		t.Fatalf("preconditions %+v, want %v", f.Preconditions, want)
	}
	for i, c := range f.Preconditions {
		if c.Name != want[i] || !c.OK {
			t.Errorf("precondition %d: %+v, want %q passed", i, c, want[i])
		}
	}
	// pods not read: the workload check passes as not checked, saying so
	if c := f.Preconditions[5]; !c.NotChecked || !strings.HasPrefix(c.Detail, NotCheckedPrefix) {
		t.Errorf("workload check without pods read: %+v", c)
	}
	if f.ReplicaChanges != nil || len(f.Stale) != 0 || f.Keep != "" {
		t.Errorf("the repair writes engines or replicas: keep %q stale %v replicas %v", f.Keep, f.Stale, f.ReplicaChanges)
	}

	// with pods and CSI attachments read and none left, it is checked
	s = staleCM(vc153)
	s.withVMPod("")
	if _, f := s.classify(t); f.Action != ActionClearMigrationNode || f.Preconditions[5].NotChecked {
		t.Errorf("VM stopped, pods read: %s %+v", f.Action, f.Preconditions[5])
	}
}

// Every refusal: the state is still reported with the steps, nothing is
// written, and the first failed check says why.
func TestStaleMigrationNodeIDRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		make  func() *scenario
		check string
		says  string
	}{
		{"1.5.2: affected, not proven", func() *scenario { return staleCM(vcL15f) }, CheckRepairProven, "not on v1.5.2"},
		{"1.9.1: affected, not proven", func() *scenario { return staleCM(vc19) }, CheckRepairProven, "not on v1.9.1"},
		{"detaching", func() *scenario {
			s := staleCM(vc153)
			s.volume().Status.State = longhorn.VolumeStateDetaching
			return s
		}, CheckVolumeDetached, "detaching"},
		{"an engine still running", func() *scenario {
			s := staleCM(vc153)
			s.engine(s.engA).Status.CurrentState = longhorn.StateRunning
			return s
		}, CheckVolumeDetached, "running engines: vol-cm"},
		{"a csi ticket asks for it", func() *scenario {
			s := staleCM(vc153)
			s.st.VolumeAttachments = nil
			s.withTickets(nil, csiTicket("vol-cm", nodeB))
			return s
		}, CheckNoAttachRequest, longhorn.CSITicketID("vol-cm", nodeB)},
		{"VolumeAttachment not read", func() *scenario {
			s := staleCM(vc153)
			s.st.VolumeAttachments = nil
			return s
		}, CheckNoAttachRequest, "not read"},
		{"the VM still runs", func() *scenario {
			s := staleCM(vc153)
			s.withVMPod(nodeA)
			return s
		}, CheckNoWorkload, "virt-launcher-vm-1-abcde"},
		{"a CSI attachment still attached", func() *scenario {
			s := staleCM(vc153)
			s.withVMPod("", nodeA)
			return s
		}, CheckNoWorkload, longhorn.CSITicketID("vol-cm", nodeA)},
		{"pods not read, Longhorn records a pod", func() *scenario {
			s := staleCM(vc153)
			s.volume().Status.KubernetesStatus = longhorn.KubernetesStatus{PVName: "vol-cm", PVCName: "disk-1", Namespace: "default",
				WorkloadsStatus: []longhorn.WorkloadStatus{{PodName: "web-0"}}}
			return s
		}, CheckNoWorkload, "web-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, f := tc.make().classify(t)
			if f.Type != TypeStaleMigrationNodeID {
				t.Fatalf("type %s: %s", f.Type, f.Reason)
			}
			if f.Action.Writes() || !f.Refused() || !f.Severity.NeedsAttention() {
				t.Errorf("action %s refused %t severity %s, want a refusal that needs attention", f.Action, f.Refused(), f.Severity)
			}
			c := f.FirstFailed()
			if c == nil || c.Name != tc.check || !strings.Contains(c.Failure, tc.says) {
				t.Fatalf("first failed %+v, want %q saying %q", c, tc.check, tc.says)
			}
			if !strings.Contains(f.Reason, "fix does not clear it: "+c.Failure) {
				t.Errorf("reason does not say why: %s", f.Reason)
			}
			if len(f.Family.Steps) != 3 || !strings.Contains(f.Family.Steps[1], "--subresource=status") {
				t.Errorf("steps: %q", f.Family.Steps)
			}
		})
	}
}
