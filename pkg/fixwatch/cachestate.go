package fixwatch

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
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

// volumeOf names the volume a cached object of resource r belongs to
// ("" when it names none), by longhorn.VolumeOf's rule. An object compact
// could not type is judged by the fields that rule reads, so that reading it
// from the cache still reports why it does not decode.
func volumeOf(r longhorn.Resource, obj any) string {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return longhorn.VolumeOf(obj)
	}
	meta := longhorn.ObjectMeta{Name: u.GetName(), Labels: u.GetLabels()}
	switch r {
	case longhorn.Volumes:
		return longhorn.VolumeOf(&longhorn.Volume{ObjectMeta: meta})
	case longhorn.Engines:
		v, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName")
		return longhorn.VolumeOf(&longhorn.Engine{ObjectMeta: meta, Spec: longhorn.EngineSpec{VolumeName: v}})
	case longhorn.Replicas:
		v, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName")
		return longhorn.VolumeOf(&longhorn.Replica{ObjectMeta: meta, Spec: longhorn.ReplicaSpec{VolumeName: v}})
	case longhorn.EngineFrontends:
		v, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName")
		return longhorn.VolumeOf(&longhorn.EngineFrontend{ObjectMeta: meta, Spec: longhorn.EngineFrontendSpec{VolumeName: v}})
	case longhorn.VolumeAttachments:
		v, _, _ := unstructured.NestedString(u.Object, "spec", "volume")
		return longhorn.VolumeOf(&longhorn.VolumeAttachment{ObjectMeta: meta, Spec: longhorn.VolumeAttachmentSpec{Volume: v}})
	}
	return ""
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
	v, err := cached[longhorn.Volume](obj)
	if err != nil {
		return nil, false, err
	}
	st.Volumes = []longhorn.Volume{*v}
	for _, r := range []longhorn.Resource{longhorn.Engines, longhorn.Replicas, longhorn.VolumeAttachments, longhorn.EngineFrontends} {
		inf := g.informer(r)
		if inf == nil {
			continue
		}
		objs, err := inf.GetIndexer().ByIndex(volumeIndex, vol)
		if err != nil {
			return nil, false, err
		}
		for _, o := range objs {
			// The State gets copies: classification must not change the cache.
			switch r {
			case longhorn.Engines:
				e, err := cached[longhorn.Engine](o)
				if err != nil {
					return nil, false, err
				}
				st.Engines = append(st.Engines, *e)
			case longhorn.Replicas:
				x, err := cached[longhorn.Replica](o)
				if err != nil {
					return nil, false, err
				}
				st.Replicas = append(st.Replicas, *x)
			case longhorn.EngineFrontends:
				ef, err := cached[longhorn.EngineFrontend](o)
				if err != nil {
					return nil, false, err
				}
				st.EngineFrontends = append(st.EngineFrontends, *ef)
			default:
				va, err := cached[longhorn.VolumeAttachment](o)
				if err != nil {
					return nil, false, err
				}
				st.VolumeAttachments = append(st.VolumeAttachments, *va)
			}
		}
	}
	// The index keeps no order; the lines that list engines should.
	longhorn.SortEngines(st.Engines)
	// What the guard prints of a finding (its reason names tickets,
	// conditions, the version setting) comes from these copies: escaped
	// here once, as readstate does for every other command.
	safetext.All(st)
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
	s, err := cached[longhorn.Setting](obj)
	if err != nil {
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
