package lhsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Labels Longhorn puts on its objects (besides longhorn.VolumeLabel).
const (
	nodeLabel = "longhornnode"
	diskLabel = "longhorndiskuuid"
	// defaultDiskPath is where every simulated node keeps its one disk.
	defaultDiskPath = "/var/lib/longhorn/"
	// defaultSize is 1 GiB, as Longhorn writes sizes: a decimal string.
	defaultSize = "1073741824"
)

// decode converts an unstructured object into one of pkg/longhorn's types.
// A JSON round trip keeps json.RawMessage fields (snapshots, processes) intact.
func decode(u *unstructured.Unstructured, into any) error {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}

// decodeAll decodes a list's items into T, in order.
func decodeAll[T any](us []unstructured.Unstructured) ([]T, error) {
	out := make([]T, 0, len(us))
	for i := range us {
		var t T
		if err := decode(&us[i], &t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// getAs reads one object (from the informer cache when there is one) and
// decodes it into T; the object read comes back too, for updates.
func getAs[T any](ctx context.Context, s *Sim, r longhorn.Resource, name string) (*unstructured.Unstructured, *T, error) {
	u, err := s.getU(ctx, r, name)
	if err != nil {
		return nil, nil, err
	}
	t := new(T)
	if err := decode(u, t); err != nil {
		return nil, nil, err
	}
	return u, t, nil
}

// liveAs reads one object from the API server (not the informer cache)
// and decodes it into T.
func liveAs[T any](ctx context.Context, s *Sim, r longhorn.Resource, name string) (*T, error) {
	u, err := s.getLive(ctx, r, name)
	if err != nil {
		return nil, err
	}
	t := new(T)
	if err := decode(u, t); err != nil {
		return nil, err
	}
	return t, nil
}

// liveVolume reads a volume from the API server: the object to update, and
// decoded.
func (s *Sim) liveVolume(ctx context.Context, vol string) (*unstructured.Unstructured, *longhorn.Volume, error) {
	vu, err := s.getLive(ctx, longhorn.Volumes, vol)
	if err != nil {
		return nil, nil, err
	}
	v := &longhorn.Volume{}
	if err := decode(vu, v); err != nil {
		return nil, nil, err
	}
	return vu, v, nil
}

// client is the dynamic client of a resource in the simulated namespace.
func (s *Sim) client(r longhorn.Resource) dynamic.ResourceInterface {
	return s.dyn.Resource(r.GVR()).Namespace(s.ns)
}

// getU reads one object. The controllers read from their informer caches,
// as longhorn-manager does; every write of theirs waits until the cache has
// caught up with it, so a sync never acts on its own stale data. Resources
// without an informer are read live.
func (s *Sim) getU(ctx context.Context, r longhorn.Resource, name string) (*unstructured.Unstructured, error) {
	st := s.store(r)
	if st == nil {
		return s.getLive(ctx, r, name)
	}
	obj, ok, err := st.GetByKey(s.ns + "/" + name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(r.GVR().GroupResource(), name)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("lhsim: unexpected %T in the %s cache", obj, r.Plural)
	}
	return u.DeepCopy(), nil
}

// listU lists a resource (from the cache, see getU), sorted by name.
func (s *Sim) listU(ctx context.Context, r longhorn.Resource) ([]unstructured.Unstructured, error) {
	st := s.store(r)
	if st == nil {
		return s.listLive(ctx, r)
	}
	var items []unstructured.Unstructured
	for _, obj := range st.List() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			items = append(items, *u.DeepCopy())
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
	return items, nil
}

func (s *Sim) store(r longhorn.Resource) cache.Indexer {
	if s.stores == nil {
		return nil
	}
	return s.stores[r.Plural]
}

func (s *Sim) getLive(ctx context.Context, r longhorn.Resource, name string) (*unstructured.Unstructured, error) {
	return s.client(r).Get(ctx, name, metav1.GetOptions{})
}

func (s *Sim) listLive(ctx context.Context, r longhorn.Resource) ([]unstructured.Unstructured, error) {
	l, err := s.client(r).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	items := l.Items
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
	return items, nil
}

// create, update, updateStatus and del write through the API server and
// then wait until the informer cache reflects the write.
func (s *Sim) create(ctx context.Context, r longhorn.Resource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	nu, err := s.client(r).Create(ctx, u, metav1.CreateOptions{})
	if err == nil {
		newer := rvAtLeast(nu.GetResourceVersion())
		// absent means not seen yet here, unlike after an update
		s.awaitCache(ctx, r, nu.GetName(), func(c *unstructured.Unstructured) bool { return c != nil && newer(c) })
	}
	return nu, err
}

func (s *Sim) update(ctx context.Context, r longhorn.Resource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	nu, err := s.client(r).Update(ctx, u, metav1.UpdateOptions{})
	if err == nil {
		s.awaitCache(ctx, r, nu.GetName(), rvAtLeast(nu.GetResourceVersion()))
	}
	return nu, err
}

func (s *Sim) updateStatus(ctx context.Context, r longhorn.Resource, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	nu, err := s.client(r).UpdateStatus(ctx, u, metav1.UpdateOptions{})
	if err == nil {
		s.awaitCache(ctx, r, nu.GetName(), rvAtLeast(nu.GetResourceVersion()))
	}
	return nu, err
}

func (s *Sim) del(ctx context.Context, r longhorn.Resource, name string) error {
	err := s.client(r).Delete(ctx, name, metav1.DeleteOptions{})
	if err == nil {
		s.awaitCache(ctx, r, name, func(u *unstructured.Unstructured) bool {
			return u == nil || u.GetDeletionTimestamp() != nil
		})
	}
	return err
}

// cacheWait bounds how long a write waits for its watch event; the event
// normally arrives within milliseconds.
const cacheWait = 5 * time.Second

// awaitCache waits until ok holds for the cached object (nil when absent).
func (s *Sim) awaitCache(ctx context.Context, r longhorn.Resource, name string, ok func(*unstructured.Unstructured) bool) {
	st := s.store(r)
	if st == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, cacheWait)
	defer cancel()
	for {
		ch := s.changedCh()
		var cur *unstructured.Unstructured
		if obj, exists, _ := st.GetByKey(s.ns + "/" + name); exists {
			cur, _ = obj.(*unstructured.Unstructured)
		}
		if ok(cur) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// rvAtLeast: the cached object is at least as new as resourceVersion rv
// (or gone, which is newer still).
func rvAtLeast(rv string) func(*unstructured.Unstructured) bool {
	want, werr := strconv.ParseUint(rv, 10, 64)
	return func(u *unstructured.Unstructured) bool {
		if u == nil {
			return true
		}
		got, gerr := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
		if werr != nil || gerr != nil {
			return u.GetResourceVersion() == rv
		}
		return got >= want
	}
}

// belongsTo tells whether an engine or replica belongs to the volume: by the
// longhornvolume label as Longhorn lists them, or, for objects created
// without the label (Longhorn's webhook would have added it), by
// spec.volumeName.
func belongsTo(u *unstructured.Unstructured, vol string) bool {
	return volumeKey(u) == vol
}

// volumeKey is the volume belongsTo takes an engine or replica to belong
// to: its longhornvolume label when it has one (even empty), else
// spec.volumeName.
func volumeKey(u *unstructured.Unstructured) string {
	if l, ok := u.GetLabels()[longhorn.VolumeLabel]; ok {
		return l
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName")
	return v
}

// volumeOf returns the volume an engine or replica belongs to.
func volumeOf(u *unstructured.Unstructured) string {
	if l, ok := u.GetLabels()[longhorn.VolumeLabel]; ok && l != "" {
		return l
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "volumeName")
	return v
}

// engineObj is an Engine as a sync sees it: the object read (for writing
// back without losing fields this package does not model), the typed working
// copy the controller mutates, and the spec as read.
type engineObj struct {
	u    *unstructured.Unstructured
	e    *longhorn.Engine
	orig *longhorn.EngineSpec // nil for an engine created in this sync
}

type replicaObj struct {
	u    *unstructured.Unstructured
	r    *longhorn.Replica
	orig *longhorn.ReplicaSpec
}

func newEngineObj(u *unstructured.Unstructured) (*engineObj, error) {
	e := &longhorn.Engine{}
	if err := decode(u, e); err != nil {
		return nil, fmt.Errorf("decode engine %s: %w", u.GetName(), err)
	}
	spec := e.Spec
	spec.ReplicaAddressMap = copyMap(e.Spec.ReplicaAddressMap)
	return &engineObj{u: u, e: e, orig: &spec}, nil
}

func newReplicaObj(u *unstructured.Unstructured) (*replicaObj, error) {
	r := &longhorn.Replica{}
	if err := decode(u, r); err != nil {
		return nil, fmt.Errorf("decode replica %s: %w", u.GetName(), err)
	}
	spec := r.Spec
	return &replicaObj{u: u, r: r, orig: &spec}, nil
}

func (o *engineObj) changed() bool {
	return o.orig == nil || !specEqual(*o.orig, o.e.Spec)
}

func (o *replicaObj) changed() bool { return o.orig == nil || !reflect.DeepEqual(*o.orig, o.r.Spec) }

// specEqual compares engine specs treating nil and empty maps alike.
func specEqual(a, b longhorn.EngineSpec) bool {
	if len(a.ReplicaAddressMap) == 0 && len(b.ReplicaAddressMap) == 0 {
		a.ReplicaAddressMap, b.ReplicaAddressMap = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func strMapToU(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// nestedMap is a copy of u's map at field ("spec", "status"), empty when
// u has none: what every write of the simulator starts from.
func nestedMap(u *unstructured.Unstructured, field string) map[string]any {
	m, _, _ := unstructured.NestedMap(u.Object, field)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// mergeInto sets values in u's map at field, keeping the fields the
// simulator does not manage.
func mergeInto(u *unstructured.Unstructured, field string, values map[string]any) error {
	m := nestedMap(u, field)
	for k, v := range values {
		m[k] = v
	}
	return unstructured.SetNestedMap(u.Object, m, field)
}

// engineSpecInto writes the engine spec fields the simulator manages into u,
// plus the longhornnode label Longhorn's datastore writes on every update.
func engineSpecInto(u *unstructured.Unstructured, e *longhorn.Engine) {
	_ = mergeInto(u, "spec", map[string]any{
		"active":            e.Spec.Active,
		"nodeID":            e.Spec.NodeID,
		"desireState":       e.Spec.DesireState,
		"replicaAddressMap": strMapToU(e.Spec.ReplicaAddressMap),
		"frontend":          e.Spec.Frontend,
		"disableFrontend":   e.Spec.DisableFrontend,
	})
	setLabel(u, nodeLabel, e.Spec.NodeID)
}

func replicaSpecInto(u *unstructured.Unstructured, r *longhorn.Replica) {
	_ = mergeInto(u, "spec", map[string]any{
		"active":      r.Spec.Active,
		"engineName":  r.Spec.EngineName,
		"desireState": r.Spec.DesireState,
		"healthyAt":   r.Spec.HealthyAt,
		"failedAt":    r.Spec.FailedAt,
		"nodeID":      r.Spec.NodeID,
	})
}

func setLabel(u *unstructured.Unstructured, k, v string) {
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[k] = v
	u.SetLabels(l)
}

func hasFinalizer(u *unstructured.Unstructured) bool {
	for _, f := range u.GetFinalizers() {
		if f == longhorn.Finalizer {
			return true
		}
	}
	return false
}

func withoutFinalizer(u *unstructured.Unstructured) []string {
	var out []string
	for _, f := range u.GetFinalizers() {
		if f != longhorn.Finalizer {
			out = append(out, f)
		}
	}
	return out
}

// ownerRefs is what Longhorn's datastore puts on engines, replicas and the
// VolumeAttachment: one reference to the Volume, without controller flags.
func ownerRefs(vol *unstructured.Unstructured) []any {
	return []any{map[string]any{
		"apiVersion": longhorn.APIVersion,
		"kind":       longhorn.Volumes.Kind,
		"name":       vol.GetName(),
		"uid":        string(vol.GetUID()),
	}}
}

func newObject(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": longhorn.APIVersion,
		"kind":       kind,
		"metadata": map[string]any{
			"name":      name,
			"namespace": ns,
		},
	}}
	return u
}

// hexOf returns the first n hex characters of sha256(s).
func hexOf(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

// nodeIP gives every node a stable pod-network address.
func nodeIP(node string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(node))
	v := h.Sum32()
	return fmt.Sprintf("10.42.%d.%d", (v>>8)%250+1, v%250+2)
}

// InstanceAddress is the address lhsim's instance managers give a
// running instance: its node's IP and its own port. Generated states use
// it so that a replica written as running has the address it would have
// on a cluster from the start.
func InstanceAddress(node, name string) (ip string, port int64) {
	return nodeIP(node), instancePort(name)
}

// instancePort gives every instance a stable port, as the instance manager
// hands out ports from its range.
func instancePort(name string) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return int64(10000 + h.Sum32()%5000)
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

func isConflict(err error) bool { return apierrors.IsConflict(err) }

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

// quoteLogValue renders a logrus text-formatter value.
func quoteLogValue(v string) string {
	if v == "" || strings.ContainsAny(v, " =\"\t\n") {
		return fmt.Sprintf("%q", v)
	}
	return v
}
