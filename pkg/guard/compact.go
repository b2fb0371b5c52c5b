package guard

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// compact is the informers' transform: it keeps of each object only what
// classification and the event lines read — the fields of our typed model,
// without managedFields, annotations, owner references or snapshot details
// — so that the cache of a 10,000-volume cluster fits in a small Job
// (docs/performance.md). It runs on every object before it is stored, also
// while the initial list streams in, so a whole object never stays in
// memory.
func compact(r longhorn.Resource) cache.TransformFunc {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil // tombstones and anything unexpected
		}
		var (
			out *unstructured.Unstructured
			err error
		)
		switch r {
		case longhorn.Volumes:
			out, err = slim[longhorn.Volume](u, nil)
		case longhorn.Engines:
			out, err = slim(u, func(e *longhorn.Engine) {
				for k := range e.Status.Snapshots {
					e.Status.Snapshots[k] = nil // only the names matter
				}
			})
		case longhorn.Replicas:
			out, err = slim[longhorn.Replica](u, nil)
		case longhorn.VolumeAttachments:
			out, err = slim[longhorn.VolumeAttachment](u, nil)
		case longhorn.Settings:
			out, err = slim[longhorn.Setting](u, nil)
		default:
			return obj, nil
		}
		if err != nil {
			return obj, nil // kept whole; decoding it later reports the problem
		}
		return out, nil
	}
}

// slim round-trips u through the typed model T, which drops every field T
// does not declare, and clears the metadata nothing here reads.
func slim[T any](u *unstructured.Unstructured, trim func(*T)) (*unstructured.Unstructured, error) {
	b, err := u.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var t T
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	if m, ok := any(&t).(metav1.Object); ok {
		m.SetManagedFields(nil)
		m.SetAnnotations(nil)
		m.SetOwnerReferences(nil)
	}
	if trim != nil {
		trim(&t)
	}
	if b, err = json.Marshal(&t); err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return out, nil
}
