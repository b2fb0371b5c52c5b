package readstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// OfflineOptions select what to read from a support bundle or from files.
type OfflineOptions struct {
	// Namespace is the Longhorn namespace given with -n; empty means
	// longhorn-system if the input has it, else the only Longhorn namespace
	// found.
	Namespace string
	// Volumes restricts the state to these volumes (all when empty).
	Volumes []string
	// Selector is a label selector on volumes, applied here since no server
	// does it.
	Selector string
	// Warnf reports what was skipped or could not be read (may be nil).
	Warnf func(format string, args ...any)
	// MaxFileBytes caps what one file or zip entry may expand to; 0 means
	// DefaultMaxFileBytes. A zip bomb stops there instead of filling the
	// memory or the disk.
	MaxFileBytes int64
}

// DefaultMaxFileBytes is far above any real bundle file (a List of 10,000
// engines is ~60 MiB; manager logs are rotated well below it).
const DefaultMaxFileBytes = 2 << 30

func (o OfflineOptions) maxFileBytes() int64 {
	if o.MaxFileBytes > 0 {
		return o.MaxFileBytes
	}
	return DefaultMaxFileBytes
}

// Partial reports whether only some volumes are selected, in which case
// orphan checks (which need every volume) must be skipped.
func (o OfflineOptions) Partial() bool { return len(o.Volumes) > 0 || o.Selector != "" }

func (o OfflineOptions) warnf() func(string, ...any) {
	if o.Warnf != nil {
		return o.Warnf
	}
	return func(string, ...any) {}
}

// Offline is what a bundle or a set of files yields: the same State a live
// read produces, plus what only offline inputs have.
type Offline struct {
	State *longhorn.State
	// Logs is the longhorn-manager log evidence per volume name (bundles).
	Logs map[string]LogEvidence
	// LogsRead is true when at least one longhorn-manager log was scanned.
	LogsRead bool
	// OrphansUnreliable says why orphan checks would mislead (an object
	// file read only in part), "" when they are sound.
	OrphansUnreliable string
	// Source names the input for the report: "bundle:<path>" or "files".
	Source string
	// Incomplete says what could not be read, one phrase each: a check
	// made on what remains could call a broken volume healthy, so the
	// commands report it and exit 2 (docs/exit-codes.md). Empty when the
	// input was read in full.
	Incomplete []string
}

// incomplete records one thing that could not be read.
func (o *Offline) incomplete(format string, args ...any) {
	o.Incomplete = append(o.Incomplete, fmt.Sprintf(format, args...))
}

// Kinds the plugin reads, by kind name.
var offlineKinds = func() map[string]longhorn.Resource {
	m := map[string]longhorn.Resource{}
	for _, r := range longhorn.AllResources {
		m[r.Kind] = r
	}
	return m
}()

// kindForPlural maps a file name such as engines.yaml to its kind.
func kindForPlural(plural string) (string, bool) {
	for _, r := range longhorn.AllResources {
		if r.Plural == plural {
			return r.Kind, true
		}
	}
	return "", false
}

// collector sorts decoded objects into one set per namespace, typed. A later
// copy of an object (same kind, namespace and name) replaces an earlier one,
// so passing a List and one of its objects again does not double it.
type collector struct {
	spaces map[string]*nsObjects
	// objects counts the Longhorn objects accepted.
	objects int
	// pods and csi are the core/v1 Pods and storage.k8s.io/v1
	// VolumeAttachments given, by namespace/name and name (a later copy
	// replaces an earlier one); podNamespaces are the namespaces of pods.
	pods          map[string]longhorn.Pod
	csi           map[string]longhorn.CSIAttachment
	podNamespaces map[string]bool
	// workloadObjects counts the Pods and CSI attachments accepted.
	workloadObjects int
}

type nsObjects struct {
	st       longhorn.State
	index    map[string]int // kind/name -> position in its slice
	version  *longhorn.Setting
	imsSeen  bool
	settings int
}

func newCollector() *collector {
	return &collector{spaces: map[string]*nsObjects{}, pods: map[string]longhorn.Pod{}, csi: map[string]longhorn.CSIAttachment{}, podNamespaces: map[string]bool{}}
}

// addWorkload keeps a Pod (v1) or a storage.k8s.io/v1 VolumeAttachment;
// ok is false for any other object.
func (c *collector) addWorkload(obj map[string]any, kind, av, defaultNS string) (ok bool, err error) {
	var w longhorn.Workloads
	switch {
	case kind == "Pod" && av == "v1":
	case kind == "VolumeAttachment" && av == "storage.k8s.io/v1":
	default:
		return false, nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return true, err
	}
	if err := decodeWorkloadObject(raw, kind, &w); err != nil {
		return true, fmt.Errorf("%s %s: %w", kind, objectName(obj), err)
	}
	for _, p := range w.Pods {
		if p.Namespace == "" {
			p.Namespace = defaultNS
		}
		if p.Name == "" {
			return true, fmt.Errorf("%s: no metadata.name", kind)
		}
		c.pods[p.Namespace+"/"+p.Name] = p
		c.podNamespaces[p.Namespace] = true
	}
	for _, a := range w.CSIAttachments {
		if a.Name == "" {
			return true, fmt.Errorf("%s: no metadata.name", kind)
		}
		c.csi[a.Name] = a
	}
	c.workloadObjects++
	return true, nil
}

// workloads are the pods and CSI attachments collected, with read
// statuses: pods of podNamespaces (nil: of every namespace that has pods)
// and CSI attachments when csiRead; absent says where they were looked for
// ("in the bundle", "in the files").
func (c *collector) workloads(podNamespaces map[string]bool, csiRead bool, absent string) longhorn.Workloads {
	var w longhorn.Workloads
	if podNamespaces == nil {
		podNamespaces = c.podNamespaces
	}
	if len(podNamespaces) > 0 {
		w.PodsRead, w.PodNamespaces, w.PodNamespacesNote = longhorn.ReadStatus{Read: true}, podNamespaces, "not "+absent
		for _, k := range sortedKeys(c.pods) {
			w.Pods = append(w.Pods, c.pods[k])
		}
	} else {
		w.PodsRead = longhorn.ReadStatus{Note: "pods not " + absent, Hint: "give the pods too (kubectl get pods -A -o yaml) to check where the workload runs"}
	}
	if csiRead || len(c.csi) > 0 {
		w.CSIRead = longhorn.ReadStatus{Read: true}
		for _, k := range sortedKeys(c.csi) {
			w.CSIAttachments = append(w.CSIAttachments, c.csi[k])
		}
	} else {
		w.CSIRead = longhorn.ReadStatus{Note: "volumeattachments.storage.k8s.io not " + absent, Hint: "give them too (kubectl get volumeattachments.storage.k8s.io -o yaml) to check where the volume is attached"}
	}
	return w
}

// errNotLonghorn marks an object of another API group: skipped silently.
var errNotLonghorn = errors.New("not a Longhorn object")

// add decodes one object. defaultKind and defaultNS apply when the object
// does not say (bundle files are named after their kind and namespace).
func (c *collector) add(obj map[string]any, defaultKind, defaultNS string) error {
	normalizeNull(obj)
	kind, _ := obj["kind"].(string)
	if kind == "" {
		kind = defaultKind
	}
	av, _ := obj["apiVersion"].(string)
	if ok, err := c.addWorkload(obj, kind, av, defaultNS); ok {
		return err
	}
	group, version, _ := strings.Cut(av, "/")
	if av != "" && group != longhorn.Group {
		return errNotLonghorn
	}
	if _, known := offlineKinds[kind]; !known {
		return errNotLonghorn
	}
	if av != "" && version != longhorn.APIVersionName {
		return fmt.Errorf("%s %s is %s: only %s is read (Longhorn 1.3 and later)", kind, objectName(obj), av, longhorn.APIVersion)
	}
	ns := defaultNS
	if md, ok := obj["metadata"].(map[string]any); ok {
		if s, _ := md["namespace"].(string); s != "" {
			ns = s
		}
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	space := c.space(ns)
	switch kind {
	case longhorn.Volumes.Kind:
		err = decodeInto(raw, kind, &space.st.Volumes, space.index)
	case longhorn.Engines.Kind:
		err = decodeInto(raw, kind, &space.st.Engines, space.index)
	case longhorn.Replicas.Kind:
		err = decodeInto(raw, kind, &space.st.Replicas, space.index)
	case longhorn.VolumeAttachments.Kind:
		err = decodeInto(raw, kind, &space.st.VolumeAttachments, space.index)
	case longhorn.EngineFrontends.Kind:
		err = decodeInto(raw, kind, &space.st.EngineFrontends, space.index)
	case longhorn.Nodes.Kind:
		err = decodeInto(raw, kind, &space.st.Nodes, space.index)
	case longhorn.InstanceManagers.Kind:
		space.imsSeen = true
		err = decodeInto(raw, kind, &space.st.InstanceManagers, space.index)
	case longhorn.Settings.Kind:
		var s longhorn.Setting
		if err = json.Unmarshal(raw, &s); err == nil {
			space.settings++
			switch s.Name {
			case longhorn.VersionSetting:
				space.version = &s
			case longhorn.ReplicaAutoBalanceSetting:
				space.st.ReplicaAutoBalance = s.Value
			}
		}
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, objectName(obj), err)
	}
	c.objects++
	return nil
}

// kindCount counts the accepted objects of one kind, over all namespaces.
func (c *collector) kindCount(kind string) int {
	n := 0
	for _, s := range c.spaces {
		switch kind {
		case longhorn.Volumes.Kind:
			n += len(s.st.Volumes)
		case longhorn.Engines.Kind:
			n += len(s.st.Engines)
		}
	}
	return n
}

func (c *collector) space(ns string) *nsObjects {
	s := c.spaces[ns]
	if s == nil {
		s = &nsObjects{index: map[string]int{}}
		s.st.Namespace = ns
		c.spaces[ns] = s
	}
	return s
}

// named is what every Longhorn type has through its ObjectMeta.
type named interface {
	GetName() string
	GetUID() types.UID
	GetResourceVersion() string
}

func decodeInto[T any, PT interface {
	*T
	named
}](raw []byte, kind string, into *[]T, index map[string]int) error {
	var obj T
	if err := json.Unmarshal(raw, &obj); err != nil {
		return err
	}
	name := PT(&obj).GetName()
	if name == "" {
		return errors.New("no metadata.name")
	}
	key := kind + "/" + name
	if i, dup := index[key]; dup {
		// The same copy given twice is harmless; two different ones
		// leave the object's state in doubt.
		prev := PT(&(*into)[i])
		differ := prev.GetUID() != PT(&obj).GetUID() || prev.GetResourceVersion() != PT(&obj).GetResourceVersion()
		(*into)[i] = obj
		if differ {
			return fmt.Errorf("two different copies (uid or resourceVersion differ); the later one is used")
		}
		return nil
	}
	index[key] = len(*into)
	*into = append(*into, obj)
	return nil
}

func objectName(obj map[string]any) string {
	if md, ok := obj["metadata"].(map[string]any); ok {
		if s, _ := md["name"].(string); s != "" {
			return fmt.Sprintf("%q", s)
		}
	}
	return "(no name)"
}

// namespaces lists the namespaces that hold Longhorn objects; objects that
// named no namespace ("") are not one.
func (c *collector) namespaces() []string {
	var out []string
	for ns := range c.spaces {
		if ns != "" {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// chooseNamespace applies the offline rule: -n if given, else
// longhorn-system if present, else the only Longhorn namespace found.
func chooseNamespace(found []string, explicit, where string) (string, error) {
	has := func(ns string) bool {
		for _, f := range found {
			if f == ns {
				return true
			}
		}
		return false
	}
	switch {
	case explicit != "":
		if len(found) > 0 && !has(explicit) {
			return "", fmt.Errorf("%s has no Longhorn objects in namespace %q; it has some in %s: choose one with -n", where, explicit, strings.Join(found, ", "))
		}
		return explicit, nil
	case has(longhorn.DefaultNamespace) || len(found) == 0:
		return longhorn.DefaultNamespace, nil
	case len(found) == 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s has Longhorn objects in several namespaces (%s): choose one with -n", where, strings.Join(found, ", "))
}

// stateFor merges the chosen namespace with the objects that named none.
func (c *collector) stateFor(ns string) (*longhorn.State, *longhorn.Setting, bool) {
	st := &longhorn.State{Namespace: ns}
	var version *longhorn.Setting
	ims := false
	for _, key := range []string{"", ns} {
		s := c.spaces[key]
		if s == nil {
			continue
		}
		st.Volumes = append(st.Volumes, s.st.Volumes...)
		st.Engines = append(st.Engines, s.st.Engines...)
		st.Replicas = append(st.Replicas, s.st.Replicas...)
		st.VolumeAttachments = append(st.VolumeAttachments, s.st.VolumeAttachments...)
		st.EngineFrontends = append(st.EngineFrontends, s.st.EngineFrontends...)
		st.Nodes = append(st.Nodes, s.st.Nodes...)
		st.InstanceManagers = append(st.InstanceManagers, s.st.InstanceManagers...)
		ims = ims || s.imsSeen
		if s.version != nil {
			version = s.version
		}
		if s.st.ReplicaAutoBalance != "" {
			st.ReplicaAutoBalance = s.st.ReplicaAutoBalance
		}
	}
	if c.spaces[ns] == nil || c.spaces[ns].settings == 0 {
		// The bundle has no settings of this Longhorn: not known.
		st.ReplicaAutoBalance = longhorn.SettingUnreadable
	}
	return st, version, ims
}

// applyVersion sets the state's version from the setting, or says why not.
func applyVersion(st *longhorn.State, s *longhorn.Setting, where string) {
	if s == nil {
		st.VersionSource = "setting " + longhorn.VersionSetting + " not found in " + where
		return
	}
	v, err := longhorn.ParseVersion(s.Value)
	if err != nil {
		st.VersionSource = fmt.Sprintf("setting %s has value %q", longhorn.VersionSetting, s.Value)
		return
	}
	st.Version, st.VersionSource = v, "setting "+longhorn.VersionSetting
}

// selectOffline keeps the selected volumes and what belongs to them, as Load
// does on a cluster; the label selector is applied here.
func selectOffline(st *longhorn.State, o OfflineOptions) error {
	vols := st.Volumes
	if o.Selector != "" {
		sel, err := labels.Parse(o.Selector)
		if err != nil {
			return fmt.Errorf("invalid selector %q: %w", o.Selector, err)
		}
		kept := vols[:0]
		for _, v := range vols {
			if sel.Matches(labels.Set(v.Labels)) {
				kept = append(kept, v)
			}
		}
		vols = kept
	}
	want, err := selectVolumes(vols, LoadOptions{Namespace: st.Namespace, Volumes: o.Volumes, Selector: o.Selector})
	if err != nil {
		return err
	}
	if want == nil {
		st.Volumes = vols
		return nil
	}
	kept := vols[:0]
	for _, v := range vols {
		if want[v.Name] {
			kept = append(kept, v)
		}
	}
	st.Volumes = kept
	st.Engines = filterByVolume(st.Engines, want)
	st.Replicas = filterByVolume(st.Replicas, want)
	st.VolumeAttachments = filterByVolume(st.VolumeAttachments, want)
	st.EngineFrontends = filterByVolume(st.EngineFrontends, want)
	return nil
}

// reportProblems prints one warning line per input with parse problems.
func reportProblems(warnf func(string, ...any), name string, p *problems) {
	if s := p.summary(); s != "" {
		warnf("%s: %s; the readable part was used", name, s)
	}
}

// latest returns the later of two times, ignoring zero.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
