package testcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// ResetForTest is Reset for a test that writes to the shared namespace: it
// fails the test on error and returns a context bounded by limit that ends
// with the test.
func (c *Cluster) ResetForTest(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	if err := c.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// Reset deletes every object of every installed longhorn.io resource, in all
// namespaces, so tests sharing one server start clean. Finalizers are
// stripped first (nothing else would ever remove them here), so Terminating
// objects go too. CRDs stay as they are: a test that uninstalls some should
// reinstall them itself.
func (c *Cluster) Reset(ctx context.Context) error {
	crds, err := c.installedLonghornCRDs(ctx)
	if err != nil {
		return fmt.Errorf("testcluster: reset: %w", err)
	}
	var gvrs []schema.GroupVersionResource
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				gvrs = append(gvrs, schema.GroupVersionResource{Group: crd.Spec.Group, Version: v.Name, Resource: crd.Spec.Names.Plural})
			}
		}
	}
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	for _, gvr := range gvrs {
		ri := c.dyn.Resource(gvr)
		list, err := ri.List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("testcluster: reset: list %s: %w", gvr.Resource, err)
		}
		namespaces := map[string]bool{}
		for _, item := range list.Items {
			namespaces[item.GetNamespace()] = true
			if len(item.GetFinalizers()) == 0 {
				continue
			}
			_, err := ri.Namespace(item.GetNamespace()).Patch(ctx, item.GetName(), types.MergePatchType, unfinalize, metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("testcluster: reset: strip finalizers of %s %s/%s: %w", gvr.Resource, item.GetNamespace(), item.GetName(), err)
			}
		}
		for ns := range namespaces {
			if err := ri.Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
				return fmt.Errorf("testcluster: reset: delete %s in %s: %w", gvr.Resource, ns, err)
			}
		}
	}
	var left string
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, gvr := range gvrs {
			list, err := c.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
			if err != nil {
				return false, err
			}
			if len(list.Items) > 0 {
				left = gvr.Resource + " " + list.Items[0].GetNamespace() + "/" + list.Items[0].GetName()
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("testcluster: reset: %s still there: %w", left, err)
	}
	return nil
}

// Create creates a Longhorn object and returns it as stored. An empty
// namespace means Namespace(). Because create ignores .status on resources
// with a status subresource (as on a real cluster), a status in obj is then
// written with a second request to /status, as Longhorn's controllers would.
func (c *Cluster) Create(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	if gvk.Group != Group {
		return nil, fmt.Errorf("testcluster: create: %s is not in group %s", gvk, Group)
	}
	d, err := c.lookupInstalled(gvk.Kind)
	if err != nil {
		return nil, err
	}
	in := obj.DeepCopy()
	if in.GetNamespace() == "" {
		in.SetNamespace(c.namespace)
	}
	gvr := schema.GroupVersionResource{Group: Group, Version: Version, Resource: d.plural}
	return CreateWithStatus(ctx, c.dyn.Resource(gvr).Namespace(in.GetNamespace()), in, d.hasStatusSubresource())
}

// CreateWithStatus creates obj through ri and, when the resource has a
// status subresource and obj a status, writes that status with a second
// request, as a controller would (a create ignores .status). A controller
// already watching may write the new object before its status is set
// (Longhorn's volume controller adds its finalizer): the status is then set
// on the fresh object, so the state a test reads is the one it created.
func CreateWithStatus(ctx context.Context, ri dynamic.ResourceInterface, obj *unstructured.Unstructured, statusSubresource bool) (*unstructured.Unstructured, error) {
	out, err := ri.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	status, hasStatus := obj.Object["status"]
	if !hasStatus || !statusSubresource {
		return out, nil
	}
	for attempt := 1; ; attempt++ {
		out.Object["status"] = runtime.DeepCopyJSONValue(status)
		res, err := ri.UpdateStatus(ctx, out, metav1.UpdateOptions{})
		if err == nil || !apierrors.IsConflict(err) || attempt == 10 {
			return res, err
		}
		if out, err = ri.Get(ctx, obj.GetName(), metav1.GetOptions{}); err != nil {
			return nil, err
		}
	}
}

// CreateYAML creates every object of a multi-document YAML (or JSON) text
// with Create. Remember YAML 1.1: quote short strings such as node names
// (nodeID: "n" — an unquoted n is the boolean false).
func (c *Cluster) CreateYAML(ctx context.Context, docs string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(docs), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, fmt.Errorf("testcluster: decode YAML: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		obj, err := c.Create(ctx, &unstructured.Unstructured{Object: m})
		if err != nil {
			return out, err
		}
		out = append(out, obj)
	}
}

func (d *crdDef) hasStatusSubresource() bool {
	for _, v := range d.crd.Spec.Versions {
		if v.Name == Version {
			return v.Subresources != nil && v.Subresources.Status != nil
		}
	}
	return false
}
