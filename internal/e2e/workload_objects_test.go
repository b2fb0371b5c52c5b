package e2e

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// What a Harvester VM's volume looks like to Kubernetes: a PVC and its
// CSI-provisioned PV named after the Longhorn volume, the virt-launcher
// pods that mount it, and the CSI attacher's VolumeAttachment. Created on
// Kubernetes' own API server, as the kubelet, the scheduler and the
// attacher would leave them.

const (
	vmNamespace = "vms"
	csiDriver   = "driver.longhorn.io"
)

// vmWorkload names a VM, its PVC and where its pods run.
type vmWorkload struct {
	vm       string
	pvc      string
	podNodes []string // one Running virt-launcher pod per node
	attached string   // the node of the CSI VolumeAttachment; "" for none
}

// withWorkload sets the volume's status.kubernetesStatus the way Longhorn's
// kubernetes-pv controller records the workload.
func withWorkload(o *testenv.Objects, vol string, w vmWorkload) *testenv.Objects {
	for _, v := range o.Volumes {
		if v.Name != vol {
			continue
		}
		ks := longhorn.KubernetesStatus{PVName: vol, PVCName: w.pvc, Namespace: vmNamespace}
		for i := range w.podNodes {
			ks.WorkloadsStatus = append(ks.WorkloadsStatus, longhorn.WorkloadStatus{
				PodName: launcherPod(w.vm, i), PodStatus: "Running", WorkloadName: w.vm, WorkloadType: "VirtualMachineInstance"})
		}
		v.Status.KubernetesStatus = ks
	}
	return o
}

func launcherPod(vm string, i int) string {
	return "virt-launcher-" + vm + "-" + string(rune('a'+i)) + "bcde"
}

// createWorkload creates the PVC, the PV, the pods and the attachment.
func createWorkload(ctx context.Context, t *testing.T, vol string, w vmWorkload) {
	t.Helper()
	c := cluster.Client()
	if err := cluster.EnsureNamespace(ctx, vmNamespace); err != nil {
		t.Fatal(err)
	}
	size := resource.MustParse("1Gi")
	sc := "longhorn"
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: w.pvc, Namespace: vmNamespace},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			StorageClassName: &sc,
			VolumeName:       vol,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}
	if _, err := c.CoreV1().PersistentVolumeClaims(vmNamespace).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: vol},
		Spec: corev1.PersistentVolumeSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Capacity:         corev1.ResourceList{corev1.ResourceStorage: size},
			StorageClassName: sc,
			ClaimRef:         &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: vmNamespace, Name: w.pvc},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: csiDriver, VolumeHandle: vol}},
		},
	}
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, node := range w.podNodes {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: launcherPod(w.vm, i), Namespace: vmNamespace,
				Labels: map[string]string{"kubevirt.io": "virt-launcher", "vm.kubevirt.io/name": w.vm},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: "VirtualMachineInstance",
					Name: w.vm, UID: types.UID("00000000-0000-0000-0000-0000000000" + string(rune('a'+i)) + "0")}},
			},
			Spec: corev1.PodSpec{
				NodeName:   node,
				Containers: []corev1.Container{{Name: "compute", Image: "registry.suse.com/suse/sles/15.6/virt-launcher:1.4.0"}},
				Volumes: []corev1.Volume{{Name: "disk-0", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: w.pvc}}}},
			},
		}
		got, err := c.CoreV1().Pods(vmNamespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got.Status.Phase = corev1.PodRunning
		if _, err := c.CoreV1().Pods(vmNamespace).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if w.attached != "" {
		if err := testenv.CreateAttachedVA(ctx, c, "csi-"+vol+"-"+w.attached, vol, w.attached); err != nil {
			t.Fatal(err)
		}
	}
}
