package testenv

// The writes and reads a simulator test makes on its namespace's Longhorn
// objects besides the simulator's own: one place instead of a dynamic
// client call and its error check at every use.

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Dynamic is a client of the API server the simulator runs on; with
// Namespace it makes an Env Namespaced (ResourceVersions).
func (e *Env) Dynamic() dynamic.Interface { return e.dyn }

// Namespace is the simulator's namespace.
func (e *Env) Namespace() string { return e.NS }

// Get reads one object of r in the namespace, or fails the test.
func (e *Env) Get(r longhorn.Resource, name string) *unstructured.Unstructured {
	e.T.Helper()
	u, err := e.dyn.Resource(r.GVR()).Namespace(e.NS).Get(e.Ctx, name, metav1.GetOptions{})
	if err != nil {
		e.T.Fatal(err)
	}
	return u
}

// MergePatch writes a JSON merge patch to one object of r (to its
// subresource sub, e.g. "status", when given), or fails the test.
func (e *Env) MergePatch(r longhorn.Resource, name, patch string, sub ...string) {
	e.T.Helper()
	e.patch(r, name, types.MergePatchType, patch, sub)
}

// JSONPatch writes a JSON patch (RFC 6902) to one object of r, or fails
// the test.
func (e *Env) JSONPatch(r longhorn.Resource, name, patch string) {
	e.T.Helper()
	e.patch(r, name, types.JSONPatchType, patch, nil)
}

func (e *Env) patch(r longhorn.Resource, name string, pt types.PatchType, patch string, sub []string) {
	e.T.Helper()
	if _, err := e.dyn.Resource(r.GVR()).Namespace(e.NS).Patch(e.Ctx, name, pt, []byte(patch), metav1.PatchOptions{}, sub...); err != nil {
		e.T.Fatal(err)
	}
}

// Delete deletes one object of r, or fails the test.
func (e *Env) Delete(r longhorn.Resource, name string) {
	e.T.Helper()
	if err := e.dyn.Resource(r.GVR()).Namespace(e.NS).Delete(e.Ctx, name, metav1.DeleteOptions{}); err != nil {
		e.T.Fatal(err)
	}
}

// Decode is an object read through a dynamic client in its typed form T
// (longhorn.Volume, ...); an object that does not decode fails the test.
func Decode[T any](t testing.TB, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := FromUnstructured(u, out); err != nil {
		t.Fatalf("decode %s %s into %T: %v", u.GetKind(), u.GetName(), out, err)
	}
	return out
}

// FromUnstructured decodes an object read through a dynamic client into its
// typed form (longhorn.Volume, ...) through JSON, as the plugin reads it:
// the typed model keeps raw JSON for some fields, which the reflection
// converter (runtime.DefaultUnstructuredConverter) does not handle. It is
// Decode for code that must not fail the test: watches, polls, goroutines.
func FromUnstructured(u *unstructured.Unstructured, into any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}
