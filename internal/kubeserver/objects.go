package kubeserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

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
	ri := s.dyn.Resource(res.GVR()).Namespace(in.GetNamespace())
	out, err := ri.Create(ctx, in, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	status, ok := in.Object["status"]
	if !ok || *res == longhorn.Settings {
		return out, nil
	}
	for attempt := 1; ; attempt++ {
		out.Object["status"] = runtime.DeepCopyJSONValue(status)
		got, err := ri.UpdateStatus(ctx, out, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) || attempt == 10 {
			return got, err
		}
		if out, err = ri.Get(ctx, in.GetName(), metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
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
	now := int64(0)
	for _, gvr := range []schema.GroupVersionResource{
		{Version: "v1", Resource: "pods"},
		{Version: "v1", Resource: "persistentvolumeclaims"},
		{Version: "v1", Resource: "configmaps"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	} {
		list, err := s.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("kubeserver: reset: list %s: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			if !testOwned(item.GetNamespace(), item.GetName()) {
				continue
			}
			// PVCs carry kubernetes.io/pvc-protection, which no controller
			// removes here.
			if len(item.GetFinalizers()) > 0 {
				_, _ = s.dyn.Resource(gvr).Namespace(item.GetNamespace()).Patch(ctx, item.GetName(), types.MergePatchType, unfinalize, metav1.PatchOptions{})
			}
			err := s.dyn.Resource(gvr).Namespace(item.GetNamespace()).Delete(ctx, item.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &now})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("kubeserver: reset: delete %s %s/%s: %w", gvr.Resource, item.GetNamespace(), item.GetName(), err)
			}
		}
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Version: "v1", Resource: "persistentvolumes"},
		{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattachments"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	} {
		list, err := s.dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("kubeserver: reset: list %s: %w", gvr.Resource, err)
		}
		for _, item := range list.Items {
			if !testOwned("", item.GetName()) {
				continue
			}
			if len(item.GetFinalizers()) > 0 {
				_, _ = s.dyn.Resource(gvr).Patch(ctx, item.GetName(), types.MergePatchType, unfinalize, metav1.PatchOptions{})
			}
			if err := s.dyn.Resource(gvr).Delete(ctx, item.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("kubeserver: reset: delete %s %s: %w", gvr.Resource, item.GetName(), err)
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
