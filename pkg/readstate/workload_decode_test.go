package readstate

import (
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func TestPodDecoding(t *testing.T) {
	for _, tc := range []struct {
		name, raw string
		want      longhorn.Pod
	}{
		{"virt-launcher owned by its VMI", `{"metadata":{"namespace":"default","name":"virt-launcher-vm1-abcde","labels":{"kubevirt.io":"virt-launcher","vm.kubevirt.io/name":"label-name"},
			"ownerReferences":[{"kind":"VirtualMachineInstance","name":"vm1","controller":true}]},
			"spec":{"nodeName":"node-a","volumes":[{"name":"disk","persistentVolumeClaim":{"claimName":"vm1-disk"}},{"name":"cfg","configMap":{"name":"x"}}]},
			"status":{"phase":"Running"}}`,
			longhorn.Pod{Namespace: "default", Name: "virt-launcher-vm1-abcde", NodeName: "node-a", Phase: "Running", Claims: []string{"vm1-disk"},
				OwnerKind: "VirtualMachineInstance", OwnerName: "vm1", VirtLauncher: true, VMI: "vm1"}},
		{"virt-launcher named by the label only", `{"metadata":{"namespace":"default","name":"virt-launcher-vm2-x","labels":{"kubevirt.io":"virt-launcher","vm.kubevirt.io/name":"vm2"}},"spec":{},"status":{"phase":"Pending"}}`,
			longhorn.Pod{Namespace: "default", Name: "virt-launcher-vm2-x", Phase: "Pending", VirtLauncher: true, VMI: "vm2"}},
		{"the controller owner wins", `{"metadata":{"namespace":"ns","name":"web-0","ownerReferences":[{"kind":"Other","name":"o"},{"kind":"StatefulSet","name":"web","controller":true}]},
			"spec":{"nodeName":"null"},"status":{"phase":"Succeeded"}}`,
			longhorn.Pod{Namespace: "ns", Name: "web-0", Phase: "Succeeded", OwnerKind: "StatefulSet", OwnerName: "web"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w longhorn.Workloads
			if err := decodeWorkloadObject([]byte(tc.raw), "Pod", &w); err != nil {
				t.Fatal(err)
			}
			got := w.Pods[0]
			if got.Namespace != tc.want.Namespace || got.Name != tc.want.Name || got.NodeName != tc.want.NodeName || got.Phase != tc.want.Phase ||
				got.OwnerKind != tc.want.OwnerKind || got.OwnerName != tc.want.OwnerName || got.VirtLauncher != tc.want.VirtLauncher || got.VMI != tc.want.VMI ||
				len(got.Claims) != len(tc.want.Claims) || (len(got.Claims) > 0 && got.Claims[0] != tc.want.Claims[0]) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	var w longhorn.Workloads
	if err := decodeWorkloadObject([]byte(`{"metadata":{"name":"csi-1"},"spec":{"attacher":"driver.longhorn.io","nodeName":"node-a","source":{"persistentVolumeName":"pv-1"}},"status":{"attached":true}}`), "VolumeAttachment", &w); err != nil {
		t.Fatal(err)
	}
	if a := w.CSIAttachments[0]; a != (longhorn.CSIAttachment{Name: "csi-1", Attacher: longhorn.CSIDriver, PVName: "pv-1", NodeName: "node-a", Attached: true}) {
		t.Errorf("attachment %+v", a)
	}
}
