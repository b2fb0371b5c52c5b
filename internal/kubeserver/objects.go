package kubeserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Namespace is where Longhorn objects are created: longhorn-system.
func (s *Server) Namespace() string { return Namespace }

// Create creates a Longhorn object (in longhorn-system when it names no
// namespace) and then writes its status through the status subresource, as
// Longhorn's controllers would: a create ignores .status.
func (s *Server) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	var res *longhorn.Resource
	for i := range longhorn.AllResources {
		if r := &longhorn.AllResources[i]; gvk.Group == longhorn.Group && r.Kind == gvk.Kind {
			res = r
		}
	}
	if res == nil {
		return nil, fmt.Errorf("kubeserver: create: %s is not a Longhorn kind", gvk)
	}
	in := obj.DeepCopy()
	if in.GetNamespace() == "" {
		in.SetNamespace(Namespace)
	}
	// Settings have no status subresource.
	return testcluster.CreateWithStatus(ctx, s.dyn.Resource(res.GVR()).Namespace(in.GetNamespace()), in, *res != longhorn.Settings)
}

// Reset deletes every Longhorn object (finalizers stripped first: nothing
// else would remove them here), and every Pod, PVC, PV, ConfigMap of ours,
// storage.k8s.io VolumeAttachment, RoleBinding, Role and ClusterRole(Binding)
// the tests made, so tests sharing one server start clean. Service accounts
// stay: their tokens outlive resets like testcluster's users.
func (s *Server) Reset(ctx context.Context) error {
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	for _, r := range longhorn.AllResources {
		ri := s.dyn.Resource(r.GVR()).Namespace(Namespace)
		list, err := ri.List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue // a kind the served release does not have (enginefrontends before 1.12)
		}
		if err != nil {
			return fmt.Errorf("kubeserver: reset: list %s: %w", r.Plural, err)
		}
		for _, item := range list.Items {
			if len(item.GetFinalizers()) == 0 {
				continue
			}
			if _, err := ri.Patch(ctx, item.GetName(), types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("kubeserver: reset: strip finalizers of %s %s: %w", r.Plural, item.GetName(), err)
			}
		}
		if err := ri.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			return fmt.Errorf("kubeserver: reset: delete %s: %w", r.Plural, err)
		}
	}
	now := int64(0) // pods: no kubelet will ever confirm a graceful delete
	for _, k := range []struct {
		gvr        schema.GroupVersionResource
		namespaced bool
	}{
		{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, true},
		{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}, true},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, true},
		{schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}, true},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}, true},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}, true},
		{schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumes"}, false},
		{schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattachments"}, false},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, false},
		{schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, false},
	} {
		list, err := s.dyn.Resource(k.gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("kubeserver: reset: list %s: %w", k.gvr.Resource, err)
		}
		for _, item := range list.Items {
			if !testOwned(item.GetNamespace(), item.GetName()) {
				continue
			}
			var ri dynamic.ResourceInterface = s.dyn.Resource(k.gvr)
			if k.namespaced {
				ri = s.dyn.Resource(k.gvr).Namespace(item.GetNamespace())
			}
			// PVCs and PVs carry protection finalizers no controller
			// removes here.
			if len(item.GetFinalizers()) > 0 {
				_, _ = ri.Patch(ctx, item.GetName(), types.MergePatchType, unfinalize, metav1.PatchOptions{})
			}
			if err := ri.Delete(ctx, item.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &now}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("kubeserver: reset: delete %s %s/%s: %w", k.gvr.Resource, item.GetNamespace(), item.GetName(), err)
			}
		}
	}
	return s.waitEmpty(ctx)
}

// testOwned tells the tests' objects from the server's own (the
// system: ClusterRoles, kube-root-ca.crt, the extension-apiserver
// ConfigMaps in kube-system).
func testOwned(namespace, name string) bool {
	switch {
	case strings.HasPrefix(name, "system:"), namespace == "kube-system", namespace == "kube-public", namespace == "kube-node-lease":
		return false
	case name == "kube-root-ca.crt", name == "admin", name == "edit", name == "view", name == "cluster-admin":
		return false
	}
	return true
}

func (s *Server) waitEmpty(ctx context.Context) error {
	var left string
	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, r := range longhorn.AllResources {
			list, err := s.dyn.Resource(r.GVR()).Namespace(Namespace).List(ctx, metav1.ListOptions{Limit: 1})
			if apierrors.IsNotFound(err) {
				continue // not served by this release
			}
			if err != nil {
				return false, err
			}
			if len(list.Items) > 0 {
				left = r.Plural + " " + list.Items[0].GetName()
				return false, nil
			}
		}
		pods, err := s.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return false, err
		}
		if len(pods.Items) > 0 {
			left = "pod " + pods.Items[0].Namespace + "/" + pods.Items[0].Name
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("kubeserver: reset: %s still there: %w", left, err)
	}
	return nil
}
