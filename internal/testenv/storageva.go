package testenv

import (
	"context"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// CreateAttachedVA creates Kubernetes' storage VolumeAttachment name of
// Longhorn's CSI driver for persistent volume pv on node, and marks it
// attached, as the CSI attacher does once the driver published the
// volume there.
func CreateAttachedVA(ctx context.Context, c kubernetes.Interface, name, pv, node string, finalizers ...string) error {
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: finalizers},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: longhorn.CSIDriver, NodeName: node,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
	}
	got, err := c.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	got.Status.Attached = true
	_, err = c.StorageV1().VolumeAttachments().UpdateStatus(ctx, got, metav1.UpdateOptions{})
	return err
}
