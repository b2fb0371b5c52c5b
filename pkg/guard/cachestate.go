package guard

import (
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// volumeIndex indexes engines, replicas and attachments by the volume they
// belong to, with detect's rule (spec.volumeName, else the longhornvolume
// label; an attachment is named after its volume).
const volumeIndex = "volume"

func volumeIndexFunc(r longhorn.Resource) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		if v := volumeOf(r, obj); v != "" {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// volumeOf names the volume an object of resource r belongs to ("" when it
// names none).
func volumeOf(r longhorn.Resource, obj any) string {
	u, ok := asUnstructured(obj)
	if !ok {
		return ""
	}
	switch r {
	case longhorn.Volumes:
		return u.GetName()
	case longhorn.Settings:
		return ""
	case longhorn.VolumeAttachments:
		if v, _, _ := unstructured.NestedString(u.Object, "spec", "volume"); v != "" {
			return v
		}
		return u.GetName()
	}
	if v, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName"); v != "" {
		return v
	}
	return u.GetLabels()[longhorn.VolumeLabel]
}

// asUnstructured unwraps the informer's objects, including the tombstone of
// an object deleted while the watch was down.
func asUnstructured(obj any) (*unstructured.Unstructured, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok && u != nil
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

// stateFor builds what detect reads for one volume from the informer
// caches: no request to the API server. found is false when the volume is
// not (or no longer) in the cache.
func (g *Guard) stateFor(vol string, now time.Time) (st *longhorn.State, found bool, err error) {
	st = &longhorn.State{Namespace: g.ns, Now: now}
	st.Version, st.VersionSource = g.version()
	// The guard watches Longhorn's objects only: where the workload runs is
	// checked on the fresh read before each repair (fix's Plan and its
	// re-check read pods and CSI attachments), not from the caches.
	notWatched := longhorn.ReadStatus{Note: "the guard does not watch pods and CSI attachments", Hint: "checked on the fresh read before a repair"}
	st.Workloads.PodsRead, st.Workloads.CSIRead = notWatched, notWatched
	obj, ok, err := g.informer(longhorn.Volumes).GetStore().GetByKey(g.ns + "/" + vol)
	if err != nil || !ok {
		return st, false, err
	}
	u, _ := asUnstructured(obj)
	var v longhorn.Volume
	if err := decode(u, &v); err != nil {
		return nil, false, err
	}
	st.Volumes = []longhorn.Volume{v}
	for _, r := range []longhorn.Resource{longhorn.Engines, longhorn.Replicas, longhorn.VolumeAttachments} {
		inf := g.informer(r)
		if inf == nil {
			continue
		}
		objs, err := inf.GetIndexer().ByIndex(volumeIndex, vol)
		if err != nil {
			return nil, false, err
		}
		for _, o := range objs {
			u, ok := asUnstructured(o)
			if !ok {
				continue
			}
			switch r {
			case longhorn.Engines:
				var e longhorn.Engine
				if err := decode(u, &e); err != nil {
					return nil, false, err
				}
				st.Engines = append(st.Engines, e)
			case longhorn.Replicas:
				var x longhorn.Replica
				if err := decode(u, &x); err != nil {
					return nil, false, err
				}
				st.Replicas = append(st.Replicas, x)
			default:
				var va longhorn.VolumeAttachment
				if err := decode(u, &va); err != nil {
					return nil, false, err
				}
				st.VolumeAttachments = append(st.VolumeAttachments, va)
			}
		}
	}
	return st, true, nil
}

// version is the Longhorn version in the cached current-longhorn-version
// setting.
func (g *Guard) version() (longhorn.Version, string) {
	inf := g.informer(longhorn.Settings)
	if inf == nil {
		return longhorn.Version{}, "settings not watched"
	}
	obj, ok, err := inf.GetStore().GetByKey(g.ns + "/" + longhorn.VersionSetting)
	if err != nil || !ok {
		return longhorn.Version{}, "setting " + longhorn.VersionSetting + " not found"
	}
	u, _ := asUnstructured(obj)
	var s longhorn.Setting
	if err := decode(u, &s); err != nil {
		return longhorn.Version{}, err.Error()
	}
	v, err := longhorn.ParseVersion(s.Value)
	if err != nil {
		return longhorn.Version{}, fmt.Sprintf("setting %s has value %q", longhorn.VersionSetting, s.Value)
	}
	return v, "setting " + longhorn.VersionSetting
}

// volumeNames lists the volumes in the cache that the guard watches.
func (g *Guard) volumeNames() []string {
	var out []string
	for _, k := range g.informer(longhorn.Volumes).GetStore().ListKeys() {
		_, name, err := cache.SplitMetaNamespaceKey(k)
		if err == nil && g.selected(name) {
			out = append(out, name)
		}
	}
	return out
}
