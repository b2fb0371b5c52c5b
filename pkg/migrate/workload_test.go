package migrate

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// TestWorkloadUseFromKubernetesAttachments covers what the test API server
// cannot serve: storage.k8s.io VolumeAttachments present, forbidden, absent.
func TestWorkloadUseFromKubernetesAttachments(t *testing.T) {
	va := func(name, attacher, pv, node string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{"attacher": attacher, "nodeName": node,
				"source": map[string]any{"persistentVolumeName": pv}},
		}}
	}
	newClient := func(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
		return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
			map[schema.GroupVersionResource]string{storageVolumeAttachments: "VolumeAttachmentList"}, objs...)
	}
	snap := snapOf(t, testenv.Healthy("v1.6.0", "pvc-1"))
	snap.kube.PVName = "pvc-1"

	c := newClient(va("csi-a", csiDriverName, "pvc-1", nodeA), va("csi-x", "other.csi.example.com", "pvc-1", nodeB), va("csi-y", csiDriverName, "pvc-2", nodeB))
	u := workloadUse(context.Background(), c, snap)
	if !u.inUse || !u.determined || !strings.Contains(strings.Join(u.evidence, " "), "node "+nodeA) || strings.Contains(strings.Join(u.evidence, " "), nodeB) {
		t.Errorf("Longhorn CSI attachment of the PV on node-a: %+v", u)
	}
	if c := u.check(); c.OK {
		t.Errorf("in-use check passed: %+v", c)
	}

	if u := workloadUse(context.Background(), newClient(va("csi-y", csiDriverName, "pvc-2", nodeB)), snap); u.inUse || !u.determined || !u.check().OK {
		t.Errorf("another volume's attachment: %+v", u)
	}

	forbidden := newClient()
	forbidden.PrependReactor("list", "volumeattachments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}, "", nil)
	})
	if u := workloadUse(context.Background(), forbidden, snap); u.determined || u.check().OK || !strings.Contains(u.check().Detail, "could not determine") {
		t.Errorf("forbidden must be undetermined and refused: %+v", u)
	}

	absent := newClient()
	absent.PrependReactor("list", "volumeattachments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}, "")
	})
	if u := workloadUse(context.Background(), absent, snap); !u.determined || u.inUse || !u.check().OK || !strings.Contains(u.note, "not served") {
		t.Errorf("API not served: %+v", u)
	}
}
