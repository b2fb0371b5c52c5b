package readstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// A support bundle, as support-bundle-kit writes it for
// Longhorn 1.4 and later:
//
//	supportbundle_<uid>_<time>/metadata.yaml
//	  yamls/namespaced/<ns>/longhorn.io/v1beta2/<plural>.yaml   one List each
//	  logs/<ns>/longhorn-manager-<suffix>/longhorn-manager.log
//	  nodes/<node>.zip                                          host data
//
// and as longhorn-manager wrote it up to 1.3:
//
//	longhorn-support-bundle_<uid>_<time>/yamls/longhorn/<plural>.yaml
//	  logs/longhorn-manager-<suffix>/longhorn-manager.log
//
// Only the files named here are opened.

const (
	layoutCluster    = "yamls/cluster/"
	layoutNamespaced = "yamls/namespaced/"
	layout13         = "yamls/longhorn/"
	managerLogPrefix = "longhorn-manager-"
)

// managerLogRE matches the manager container's log, and the previous
// container's log when it restarted.
var managerLogRE = regexp.MustCompile(`^longhorn-manager\.log(\.[0-9]+)?$`)

// LoadBundle reads a Longhorn support bundle: the zip as downloaded, or the
// folder it was extracted to.
func LoadBundle(ctx context.Context, path string, o OfflineOptions) (*Offline, error) {
	warnf := o.warnf()
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var b bundleFS
	if fi.IsDir() {
		if b, err = openDirBundle(path, warnf); err != nil {
			return nil, err
		}
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		if b, err = openZip(f, fi.Size(), f, path, warnf); err != nil {
			return nil, err
		}
	}
	defer func() { _ = b.close() }()
	return loadBundle(ctx, b, bundleInfo{path: path, modTime: fi.ModTime()}, o)
}

// openZip opens a zip through its central directory, or salvages the entries
// before the damage when that is gone.
func openZip(ra io.ReaderAt, size int64, closer io.Closer, display string, warnf func(string, ...any)) (bundleFS, error) {
	zb, err := openZipBundle(ra, size, closer)
	if err == nil {
		return zb, nil
	}
	sb := salvageZip(ra, size, closer)
	if len(sb.names) == 0 {
		if closer != nil {
			_ = closer.Close()
		}
		return nil, fmt.Errorf("%s: neither a readable zip nor a folder (%v)", display, err)
	}
	damage := sb.damage
	if damage == "" {
		damage = "its table of contents is unreadable"
	}
	warnf("%s: damaged zip (%v): %s; reading the %d file(s) found before the damage", display, err, damage, len(sb.names))
	return sb, nil
}

type bundleInfo struct {
	path    string
	modTime time.Time
}

// catalog is what the bundle holds that the analysis may need.
type catalog struct {
	root string
	// objects[ns][version][plural] = file, for the namespaced layout.
	objects map[string]map[string]map[string]string
	// objects13[plural] = file, for the 1.3 layout.
	objects13 map[string]string
	metadata  string
	names     []string
	// podFiles[ns] = yamls/namespaced/<ns>/v1/pods.yaml; coreNamespaces
	// are the namespaces with any yamls/namespaced/<ns>/v1/ file (the kit
	// collected them; a resource with no objects gets no file).
	podFiles       map[string]string
	coreNamespaces map[string]bool
	// csiFile is yamls/cluster/storage.k8s.io/v1/volumeattachments.yaml;
	// storageGroup is true when the bundle has any yamls/cluster/storage.k8s.io/ file.
	csiFile      string
	storageGroup bool
}

// loadBundle reads an opened bundle. Every string read is escaped for a
// terminal (safetext.All), as Load does.
func loadBundle(ctx context.Context, b bundleFS, info bundleInfo, o OfflineOptions) (*Offline, error) {
	off, err := readBundle(ctx, b, info, o)
	if off != nil {
		safetext.All(off)
	}
	return off, err
}

func readBundle(ctx context.Context, b bundleFS, info bundleInfo, o OfflineOptions) (*Offline, error) {
	warnf := o.warnf()
	display := filepath.Base(info.path)
	roots := bundleRoots(b.files())
	if len(roots) == 0 {
		return nil, noBundleError(info.path, b.files())
	}
	if len(roots) > 1 {
		warnf("%s holds several bundles (%s); reading %s", display, strings.Join(roots, ", "), orDot(roots[0]))
	}
	cat := catalogue(b.files(), roots[0])
	meta := readMetadata(b, cat, warnf)

	c := newCollector()
	r := &bundleReader{ctx: ctx, b: b, c: c, warnf: warnf, limit: o.maxFileBytes()}
	var ns string
	layout13Used := false
	switch {
	case len(cat.objects) > 0:
		var err error
		if ns, err = chooseNamespace(sortedKeys(cat.objects), o.Namespace, "the bundle"); err != nil {
			return nil, err
		}
		files := cat.objects[ns][longhorn.APIVersionName]
		if files == nil {
			return nil, versionDirError(cat, ns)
		}
		r.readResources(files, ns, false)
		r.checkRequired(files)
	case len(cat.objects13) > 0:
		layout13Used = true
		warnf("%s: Longhorn 1.3 bundle layout (yamls/longhorn/): its field names are mapped from Longhorn's types, not checked against a real 1.3 bundle", display)
		r.readResources(cat.objects13, "", true)
		r.checkRequired(cat.objects13)
		var err error
		if ns, err = chooseNamespace(c.namespaces(), o.Namespace, "the bundle"); err != nil {
			return nil, err
		}
		if r.unnamed > 0 && c.objects == 0 {
			return nil, fmt.Errorf("%s: the Longhorn 1.3 bundle layout could not be read reliably (%d object(s) without objectmeta.name); pass 'kubectl get ... -o yaml' output with -f instead", display, r.unnamed)
		}
	default:
		return nil, fmt.Errorf("%s: no Longhorn objects in the bundle (no %s<namespace>/%s/ and no %s)", display, layoutNamespaced, longhorn.Group, layout13)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.objects == 0 {
		return nil, fmt.Errorf("%s: no Longhorn object could be read in namespace %q", display, ns)
	}

	st, setting, _ := c.stateFor(ns)
	st.InstanceManagersRead = !r.imsIncomplete
	st.Workloads = r.readWorkloads(cat, st.Volumes)
	applyVersion(st, setting, "the bundle")
	if !st.Version.Known() && meta.version != "" {
		if v, err := longhorn.ParseVersion(meta.version); err == nil {
			st.Version, st.VersionSource = v, "bundle metadata.yaml"
		}
	}
	if !st.Version.Known() {
		warnf("Longhorn version unknown (%s): findings are reported, no repair is proposed", st.VersionSource)
	}
	st.Now = bundleTime(meta, cat, info, warnf)
	if len(st.Volumes) == 0 {
		warnf("%s: no Longhorn volumes in namespace %q", display, ns)
	}

	off := &Offline{State: st, Source: "bundle:" + info.path}
	if d := damageOf(b); d != "" {
		off.incomplete("%s is damaged (%s): the files after the damage are missing", display, d)
	}
	if n := unsafeNames(b); n > 0 {
		warnf("%s: %d entr(ies) with a name that climbs out of the bundle (..) were skipped", display, n)
	}
	for _, m := range r.missing {
		off.incomplete("%s", m)
	}
	if len(r.incomplete) > 0 {
		off.OrphansUnreliable = fmt.Sprintf("%s not read completely", strings.Join(r.incomplete, ", "))
		for _, f := range r.incomplete {
			off.incomplete("%s was not read completely", f)
		}
	}
	var logsIncomplete []string
	off.Logs, off.LogsRead, logsIncomplete = scanManagerLogs(ctx, b, cat, ns, layout13Used, r.limit, warnf)
	for _, f := range logsIncomplete {
		off.incomplete("%s was not read completely", f)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := selectOffline(st, o); err != nil {
		return nil, err
	}
	if m := missingFrontends(st); m != "" {
		// The kit writes no file for a kind without objects: a v2 volume
		// of 1.12+ with none means the bundle lost them (or predates them).
		off.incomplete("%s in the bundle (no %s.yaml entry for it)", m, longhorn.EngineFrontends.Plural)
	}
	return off, nil
}

// bundleRoots finds the bundle's top folder(s): whatever precedes a
// yamls/<layout>/ path. Shallowest first.
func bundleRoots(names []string) []string {
	set := map[string]bool{}
	for _, n := range names {
		parts := strings.Split(n, "/")
		for i := 0; i+1 < len(parts); i++ {
			if parts[i] == "yamls" && (parts[i+1] == "namespaced" || parts[i+1] == "longhorn" || parts[i+1] == "cluster" || parts[i+1] == "kubernetes") {
				root := strings.Join(parts[:i], "/")
				if root != "" {
					root += "/"
				}
				set[root] = true
				break
			}
		}
	}
	roots := make([]string, 0, len(set))
	for r := range set {
		roots = append(roots, r)
	}
	sort.Slice(roots, func(i, j int) bool {
		di, dj := strings.Count(roots[i], "/"), strings.Count(roots[j], "/")
		if di != dj {
			return di < dj
		}
		return roots[i] < roots[j]
	})
	return roots
}

func noBundleError(path string, names []string) error {
	for _, n := range names {
		if strings.HasSuffix(strings.ToLower(n), ".zip") && !strings.Contains(n, "nodes/") {
			return fmt.Errorf("%s: no support bundle layout (no yamls/ folder), but it holds %s: pass the bundle zip itself", path, n)
		}
	}
	return fmt.Errorf("%s: no support bundle layout (no yamls/ folder); for YAML or JSON files use -f", path)
}

func catalogue(names []string, root string) *catalog {
	cat := &catalog{root: root, objects: map[string]map[string]map[string]string{}, objects13: map[string]string{},
		podFiles: map[string]string{}, coreNamespaces: map[string]bool{}}
	for _, n := range names {
		if !strings.HasPrefix(n, root) {
			continue
		}
		rel := n[len(root):]
		cat.names = append(cat.names, n)
		switch {
		case rel == "metadata.yaml":
			cat.metadata = n
		case strings.HasPrefix(rel, layoutCluster+"storage.k8s.io/"):
			cat.storageGroup = true
			if rel == layoutCluster+"storage.k8s.io/v1/volumeattachments.yaml" {
				cat.csiFile = n
			}
		case strings.HasPrefix(rel, layoutNamespaced) && isCoreFile(rel[len(layoutNamespaced):]):
			// <ns>/v1/<plural>.yaml
			parts := strings.Split(rel[len(layoutNamespaced):], "/")
			cat.coreNamespaces[parts[0]] = true
			if parts[2] == "pods.yaml" {
				cat.podFiles[parts[0]] = n
			}
		case strings.HasPrefix(rel, layoutNamespaced):
			// <ns>/longhorn.io/<version>/<plural>.yaml
			parts := strings.Split(rel[len(layoutNamespaced):], "/")
			if len(parts) != 4 || parts[1] != longhorn.Group || !strings.HasSuffix(parts[3], ".yaml") {
				continue
			}
			plural := strings.TrimSuffix(parts[3], ".yaml")
			if _, ok := kindForPlural(plural); !ok {
				continue
			}
			byVer := cat.objects[parts[0]]
			if byVer == nil {
				byVer = map[string]map[string]string{}
				cat.objects[parts[0]] = byVer
			}
			if byVer[parts[2]] == nil {
				byVer[parts[2]] = map[string]string{}
			}
			byVer[parts[2]][plural] = n
		case strings.HasPrefix(rel, layout13):
			base := rel[len(layout13):]
			plural := strings.TrimSuffix(base, ".yaml")
			if _, ok := kindForPlural(plural); ok && !strings.Contains(base, "/") && strings.HasSuffix(base, ".yaml") {
				cat.objects13[plural] = n
			}
		}
	}
	sort.Strings(cat.names)
	return cat
}

// isCoreFile: <ns>/v1/<plural>.yaml, a core/v1 file of one namespace.
func isCoreFile(rel string) bool {
	parts := strings.Split(rel, "/")
	return len(parts) == 3 && parts[1] == "v1" && strings.HasSuffix(parts[2], ".yaml")
}

// readWorkloads reads the pods of the namespaces the volumes' PVCs are in
// (kubernetesStatus.namespace; only those files are opened) and the CSI
// attachments, as far as the bundle has them. A namespace is read when the
// kit collected it (any yamls/namespaced/<ns>/v1/ file: a namespace without
// pods has no pods.yaml). A file read only in part makes its kind Failed:
// a repair is then refused rather than judged on part of the pods.
func (r *bundleReader) readWorkloads(cat *catalog, vols []longhorn.Volume) longhorn.Workloads {
	var failed []string
	nss := map[string]bool{}
	for i := range vols {
		ns := vols[i].Status.KubernetesStatus.Namespace
		if ns == "" || !cat.coreNamespaces[ns] || nss[ns] {
			continue
		}
		nss[ns] = true
		if f, ok := cat.podFiles[ns]; ok && !r.readFile(f, "Pod", ns, false) {
			failed = append(failed, f)
		}
	}
	csiFailed := cat.csiFile != "" && !r.readFile(cat.csiFile, "VolumeAttachment", "", false)
	w := r.c.workloads(nss, cat.storageGroup, "in the bundle")
	const kit = "not in the bundle (support-bundle-kit collects the pods of default, kube-system, cattle-system and the Longhorn namespace)"
	if len(cat.coreNamespaces) > 0 {
		w.PodsRead, w.PodNamespaces, w.PodNamespacesNote = longhorn.ReadStatus{Read: true}, nss, kit
	} else {
		w.PodsRead, w.PodNamespaces = longhorn.ReadStatus{Note: "pods not in the bundle", Hint: "check the workload's node by hand"}, nil
	}
	if len(failed) > 0 {
		w.PodsRead = longhorn.ReadStatus{Failed: true, Note: strings.Join(failed, ", ") + " not read completely"}
		w.PodNamespaces = nil
	}
	if !w.CSIRead.Read {
		w.CSIRead.Hint = "check the volume's CSI attachment by hand"
	}
	if csiFailed {
		w.CSIRead = longhorn.ReadStatus{Failed: true, Note: cat.csiFile + " not read completely"}
	}
	return w
}

func versionDirError(cat *catalog, ns string) error {
	vers := sortedKeys(cat.objects[ns])
	return fmt.Errorf("the bundle has Longhorn objects in namespace %q only as %s/%s: Longhorn before 1.3 (no %s) is not supported",
		ns, longhorn.Group, strings.Join(vers, ", "), longhorn.APIVersion)
}

// bundleReader reads the object files of one namespace.
type bundleReader struct {
	ctx   context.Context
	b     bundleFS
	c     *collector
	warnf func(string, ...any)
	// incomplete lists object files that were not read in full.
	incomplete []string
	// imsIncomplete: the instance managers could not be read in full, so
	// orphan processes cannot be judged.
	imsIncomplete bool
	unnamed       int
	// missing says which files the check needs are not in the bundle.
	missing []string
	limit   int64
}

// checkRequired: support-bundle-kit writes no file for a resource without
// objects, but a Longhorn with volumes has engines and replicas for them, and
// a bundle without volumes.yaml cannot tell "no volumes" from "file lost".
func (r *bundleReader) checkRequired(files map[string]string) {
	if _, ok := files[longhorn.Volumes.Plural]; !ok {
		r.missing = append(r.missing, "the bundle has no "+longhorn.Volumes.Plural+".yaml: its volumes are unknown")
		return
	}
	if r.c.objects == 0 {
		return
	}
	for _, res := range []longhorn.Resource{longhorn.Engines, longhorn.Replicas} {
		if _, ok := files[res.Plural]; !ok && r.c.kindCount(longhorn.Volumes.Kind) > 0 {
			r.missing = append(r.missing, fmt.Sprintf("the bundle has volumes but no %s.yaml", res.Plural))
		}
	}
}

// readOrder puts the version setting and volumes first: the rest is about them.
var readOrder = []longhorn.Resource{
	longhorn.Settings, longhorn.Volumes, longhorn.Engines, longhorn.Replicas,
	longhorn.VolumeAttachments, longhorn.Nodes, longhorn.InstanceManagers, longhorn.EngineFrontends,
}

func (r *bundleReader) readResources(files map[string]string, ns string, v13 bool) {
	for _, res := range readOrder {
		file, ok := files[res.Plural]
		if !ok {
			// support-bundle-kit writes no file for a resource with no
			// objects, so absence is normal except for the setting.
			if res == longhorn.Settings {
				r.warnf("the bundle has no %s.yaml for the Longhorn namespace: the Longhorn version is read from metadata.yaml if it has it", res.Plural)
			}
			continue
		}
		if r.ctx.Err() != nil {
			return
		}
		if !r.readFile(file, res.Kind, ns, v13) {
			r.incomplete = append(r.incomplete, file)
			if res == longhorn.InstanceManagers {
				r.imsIncomplete = true
			}
		}
	}
}

// readFile decodes one object file; false when part of it was lost.
func (r *bundleReader) readFile(file, kind, ns string, v13 bool) bool {
	rc, err := openLimited(r.b, file, r.limit)
	if err != nil {
		r.warnf("%s: %v", file, err)
		return false
	}
	defer func() { _ = rc.Close() }()
	var probs problems
	err = decodeStream(rc, &probs, func(obj map[string]any) error {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if v13 {
			m, _ := translate13(normalizeNull(obj)).(map[string]any)
			obj = m
		}
		// A file holds one kind of one namespace: anything else in it is
		// not what the bundle writer wrote.
		if k, _ := obj["kind"].(string); k != "" && k != kind {
			probs.add("%s %s in the %s file", k, objectName(obj), kind)
			return nil
		}
		if md, _ := obj["metadata"].(map[string]any); ns != "" && md != nil {
			if s, _ := md["namespace"].(string); s != "" && s != ns {
				probs.add("%s %s of namespace %q in the file of namespace %q", kind, objectName(obj), s, ns)
				return nil
			}
		}
		if err := r.c.add(obj, kind, ns); err != nil && !errors.Is(err, errNotLonghorn) {
			if v13 && strings.Contains(err.Error(), "no metadata.name") {
				r.unnamed++
			}
			probs.add("%v", err)
		}
		return nil
	})
	complete := probs.total == 0
	if err != nil && r.ctx.Err() == nil {
		r.warnf("%s: read error after some objects (%v); the objects before it were used", file, err)
		complete = false
	}
	reportProblems(r.warnf, file, &probs)
	return complete
}

// scanManagerLogs scans every longhorn-manager log of the namespace.
func scanManagerLogs(ctx context.Context, b bundleFS, cat *catalog, ns string, v13 bool, limit int64, warnf func(string, ...any)) (map[string]LogEvidence, bool, []string) {
	var incomplete []string
	prefix := cat.root + "logs/" + ns + "/"
	if v13 {
		prefix = cat.root + "logs/"
	}
	s := newLogScanner(ns)
	for _, n := range cat.names {
		if ctx.Err() != nil {
			return nil, false, nil
		}
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		parts := strings.Split(n[len(prefix):], "/")
		if len(parts) != 2 || !strings.HasPrefix(parts[0], managerLogPrefix) || !managerLogRE.MatchString(parts[1]) {
			continue
		}
		rc, err := openLimited(b, n, limit)
		if err != nil {
			warnf("%s: %v", n, err)
			incomplete = append(incomplete, n)
			continue
		}
		if err := s.scan(n, rc); err != nil {
			warnf("%s: read error (%v); the lines before it were scanned", n, err)
			incomplete = append(incomplete, n)
		}
		_ = rc.Close()
	}
	if s.files == 0 {
		warnf("the bundle has no longhorn-manager logs for namespace %q: findings carry no log evidence", ns)
		return nil, false, incomplete
	}
	return s.result(), true, incomplete
}

// bundleMeta is what metadata.yaml says that we use.
type bundleMeta struct {
	createdAt time.Time
	version   string
}

// readMetadata reads metadata.yaml. yaml.v2 wrote it from a Go struct, so its
// keys are lower-cased field names (bundlecreatedat); JSON-named keys
// (bundleCreatedAt) are accepted too.
func readMetadata(b bundleFS, cat *catalog, warnf func(string, ...any)) bundleMeta {
	var m bundleMeta
	if cat.metadata == "" {
		return m
	}
	rc, err := openLimited(b, cat.metadata, 1<<20)
	if err != nil {
		warnf("%s: %v", cat.metadata, err)
		return m
	}
	defer func() { _ = rc.Close() }()
	raw, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		warnf("%s: %v", cat.metadata, err)
		return m
	}
	v, err := yamlToAny(raw)
	if err != nil {
		warnf("%s: YAML does not parse: %s", cat.metadata, cmdutil.OneLine(err))
		return m
	}
	fields := map[string]string{}
	if obj, ok := v.(map[string]any); ok {
		for k, val := range obj {
			if s, ok := val.(string); ok {
				fields[strings.ToLower(k)] = s
			}
		}
	}
	if s := fields["bundlecreatedat"]; s != "" {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			m.createdAt = t.UTC()
		}
	}
	switch {
	case fields["longhornversion"] != "":
		m.version = fields["longhornversion"]
	case strings.EqualFold(fields["projectname"], "longhorn"):
		m.version = fields["projectversion"]
	}
	return m
}

// nameTimeRE is the creation time in a bundle's name, with ':' replaced by
// '-': supportbundle_<uid>_2024-05-01T12-00-00Z.zip.
var nameTimeRE = regexp.MustCompile(`(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z`)

// bundleTime is the reference time for ages: when the bundle was taken.
func bundleTime(meta bundleMeta, cat *catalog, info bundleInfo, warnf func(string, ...any)) time.Time {
	if !meta.createdAt.IsZero() {
		return meta.createdAt
	}
	for _, name := range []string{strings.TrimSuffix(cat.root, "/"), filepath.Base(info.path)} {
		if m := nameTimeRE.FindStringSubmatch(filepath.Base(name)); m != nil {
			if t, err := time.Parse(time.RFC3339, m[1]+"T"+m[2]+":"+m[3]+":"+m[4]+"Z"); err == nil {
				return t
			}
		}
	}
	warnf("%s: the bundle's creation time is unknown (no bundleCreatedAt in metadata.yaml, no time in its name): ages are measured from the file's modification time, %s",
		filepath.Base(info.path), info.modTime.UTC().Format(time.RFC3339))
	return info.modTime.UTC()
}

func sortedKeys[V any](m map[string]V) []string { return longhorn.SortedKeys(m) }

func orDot(root string) string {
	if root == "" {
		return "."
	}
	return strings.TrimSuffix(root, "/")
}
