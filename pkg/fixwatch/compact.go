package fixwatch

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// compact is the informers' transform: the caches hold our typed model
// (*longhorn.Volume, *longhorn.Engine, ...), not the decoded JSON maps, and
// without managedFields, annotations, owner references or snapshot details,
// so that the cache of a 10,000-volume cluster fits in a small Job
// (docs/performance.md). It runs on every object before it is stored, also
// while the initial list streams in, so a whole object never stays in
// memory. An object the model cannot decode is kept as it came; reading it
// from the cache reports the problem.
func compact(r longhorn.Resource) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // tombstones, and objects already typed
		}
		var (
			out any
			err error
		)
		switch r {
		case longhorn.Volumes:
			out, err = typed[longhorn.Volume](u, nil)
		case longhorn.Engines:
			out, err = typed(u, func(e *longhorn.Engine) {
				for k := range e.Status.Snapshots {
					e.Status.Snapshots[k] = nil // only the names matter
				}
			})
		case longhorn.Replicas:
			out, err = typed[longhorn.Replica](u, nil)
		case longhorn.VolumeAttachments:
			out, err = typed[longhorn.VolumeAttachment](u, nil)
		case longhorn.EngineFrontends:
			out, err = typed[longhorn.EngineFrontend](u, nil)
		case longhorn.Settings:
			out, err = typed[longhorn.Setting](u, nil)
		default:
			return obj, nil
		}
		if err != nil {
			return obj, nil
		}
		return out, nil
	}
}

// typed decodes u into the model T, whose metadata (longhorn.ObjectMeta)
// holds only what is read: managedFields, annotations, finalizers and owner
// references are left behind.
func typed[T any](u *unstructured.Unstructured, trim func(*T)) (*T, error) {
	t := new(T)
	if err := decode(u, t); err != nil {
		return nil, err
	}
	if trim != nil {
		trim(t)
	}
	return t, nil
}

// cached returns an object of an informer's cache, or of its events, as the
// model T: typed by compact already, or decoded now from an object compact
// kept as it came (then the error says what does not decode). A tombstone
// (an object deleted while the watch was down) is unwrapped.
func cached[T any](obj any) (*T, error) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	switch o := obj.(type) {
	case *T:
		return o, nil
	case *unstructured.Unstructured:
		t := new(T)
		return t, decode(o, t)
	}
	return nil, fmt.Errorf("unexpected %T in the cache", obj)
}

// objectMeta is the metadata of a cached object or tombstone; nil when obj
// has none.
func objectMeta(obj any) metav1.Object {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if obj == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	return m
}

// decode fills a typed model through JSON: the models keep raw JSON for some
// fields, which the reflection converter does not handle.
func decode(u *unstructured.Unstructured, into any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("decoding %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
