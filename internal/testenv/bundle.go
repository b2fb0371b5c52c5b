package testenv

// Support bundles for tests, laid out and encoded the way support-bundle-kit
// does for Longhorn 1.4 and later: a top folder
// supportbundle_<uid>_<time>, metadata.yaml with lower-cased keys, one YAML
// List per namespace and resource under
// yamls/namespaced/<ns>/<group>/<version>/<plural>.yaml with the "null"
// rewriting of empty values, and container logs under
// logs/<ns>/<pod>/<container>.log with kubelet timestamps. A bundle is written
// as a folder or as a zip, and a zip can be damaged on purpose.

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Bundle is a support bundle to write.
type Bundle struct {
	// UID stands for the Longhorn namespace's UID in the name.
	UID string
	// CreatedAt is the bundle's time: in metadata.yaml and in the name.
	CreatedAt time.Time
	// NoMetadata leaves metadata.yaml out; NoTimeInName writes the top
	// folder as plain "bundle".
	NoMetadata, NoTimeInName bool
	// Objects are JSON-shaped objects as the API server returns them; each
	// goes to the List file of its namespace, group, version and kind.
	Objects []map[string]any
	// Logs maps a path under logs/ (e.g.
	// "longhorn-system/longhorn-manager-x1/longhorn-manager.log") to its
	// content.
	Logs map[string]string
	// Extra maps other paths inside the top folder to their content (node
	// bundles, pods.yaml, ...).
	Extra map[string][]byte
	// NoNullQuirk writes empty values as they are.
	NoNullQuirk bool
}

// Name is the top folder, also the zip's base name.
func (b *Bundle) Name() string {
	if b.NoTimeInName {
		return "bundle"
	}
	uid := b.UID
	if uid == "" {
		uid = "0d5a2c1e-8b1f-4c3a-9e57-4c1b2a3d4e5f"
	}
	return "supportbundle_" + uid + "_" + strings.ReplaceAll(b.created().Format(time.RFC3339), ":", "-")
}

func (b *Bundle) created() time.Time {
	if b.CreatedAt.IsZero() {
		return time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	}
	return b.CreatedAt.UTC()
}

// Files returns every file of the bundle: path (under the top folder) to
// content.
func (b *Bundle) Files() (map[string][]byte, error) {
	top := b.Name() + "/"
	out := map[string][]byte{}
	if !b.NoMetadata {
		// yaml.v2 encodes the kit's Go struct with lower-cased field names.
		out[top+"metadata.yaml"] = []byte(fmt.Sprintf("projectname: Longhorn\nprojectversion: \"\"\nbundleversion: \"\"\nkubernetesversion: v1.27.10\nprojectnamspaceuuid: %s\nbundlecreatedat: \"%s\"\nissueurl: \"\"\nissuedescription: test\n",
			b.UID, b.created().Format(time.RFC3339)))
	}
	out[top+"bundleGenerationError.log"] = nil
	lists := map[string][]map[string]any{}
	for _, o := range b.Objects {
		p, err := listPath(o)
		if err != nil {
			return nil, err
		}
		lists[p] = append(lists[p], o)
	}
	for p, items := range lists {
		gv, kind := "", ""
		if len(items) > 0 {
			gv, _ = items[0]["apiVersion"].(string)
			kind, _ = items[0]["kind"].(string)
		}
		y, err := ListYAML(gv, kind, items, !b.NoNullQuirk)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out[top+p] = y
	}
	for p, content := range b.Logs {
		out[top+"logs/"+p] = []byte(content)
	}
	for p, content := range b.Extra {
		out[top+p] = content
	}
	return out, nil
}

// listPath is yamls/namespaced/<ns>/<group>/<version>/<plural>.yaml ("v1"
// has no group folder).
func listPath(o map[string]any) (string, error) {
	gv, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	md, _ := o["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	if gv == "" || kind == "" || ns == "" {
		return "", fmt.Errorf("object without apiVersion, kind or namespace: %v", md["name"])
	}
	return path.Join("yamls/namespaced", ns, gv, Plural(kind)+".yaml"), nil
}

// Plural is the resource name of a kind: Longhorn's, else lower case + "s".
func Plural(kind string) string {
	for _, r := range longhorn.AllResources {
		if r.Kind == kind {
			return r.Plural
		}
	}
	return strings.ToLower(kind) + "s"
}

// nullKeyRE matches a JSON key whose value is null followed by a comma.
var nullKeyRE = regexp.MustCompile(`("[a-zA-Z]+":)null,`)

// NullQuirk applies support-bundle-kit's rewriting to JSON text: a null
// value followed by a comma and every empty string become the string "null".
func NullQuirk(j []byte) []byte {
	s := nullKeyRE.ReplaceAllString(string(j), `${1}"null",`)
	return []byte(strings.ReplaceAll(s, `""`, `"null"`))
}

// ListYAML encodes items as the kit writes a List: top-level apiVersion v1,
// kind List, each item with its apiVersion and kind, the "null" rewriting
// applied to the JSON first, then YAML with sorted keys.
func ListYAML(groupVersion, kind string, items []map[string]any, quirk bool) ([]byte, error) {
	its := make([]any, len(items))
	for i, it := range items {
		c := make(map[string]any, len(it))
		for k, v := range it {
			c[k] = v
		}
		c["apiVersion"], c["kind"] = groupVersion, kind
		its[i] = c
	}
	j, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": its})
	if err != nil {
		return nil, err
	}
	if quirk {
		j = NullQuirk(j)
	}
	return yaml.JSONToYAML(j)
}

// WriteDir writes the bundle as an extracted folder under dir and returns
// the folder's path.
func (b *Bundle) WriteDir(dir string) (string, error) {
	files, err := b.Files()
	if err != nil {
		return "", err
	}
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, content, 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, b.Name()), nil
}

// WriteZip writes the bundle as <dir>/<name>.zip and returns its path.
func (b *Bundle) WriteZip(dir string) (string, error) {
	data, err := b.zip()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, b.Name()+".zip")
	return p, os.WriteFile(p, data, 0o644)
}

// ZipPath is WriteZip, or fails the test.
func (b *Bundle) ZipPath(t testing.TB, dir string) string {
	t.Helper()
	p, err := b.WriteZip(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ZipData is the bundle as a zip, or fails the test.
func (b *Bundle) ZipData(t testing.TB) []byte {
	t.Helper()
	data, err := b.zip()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func (b *Bundle) zip() ([]byte, error) {
	files, err := b.Files()
	if err != nil {
		return nil, err
	}
	return Zip(files)
}

// WriteZipAndDir writes the bundle both ways under dir, or fails the test:
// as <dir>/<name>.zip and extracted under <dir>/extracted, the two forms a
// reader must read the same. It returns the zip's and the top folder's path.
func (b *Bundle) WriteZipAndDir(t testing.TB, dir string) (zipPath, folder string) {
	t.Helper()
	zipPath = b.ZipPath(t, dir)
	folder, err := b.WriteDir(filepath.Join(dir, "extracted"))
	if err != nil {
		t.Fatal(err)
	}
	return zipPath, folder
}

// Zip builds a zip of files in name order, deflated.
func Zip(files map[string][]byte) ([]byte, error) { return ZipSorted(files, nil) }

// ZipSorted builds a zip with the entries ordered by less (name order when
// nil), so a test decides which entry a truncation cuts.
func ZipSorted(files map[string][]byte, less func(a, b string) bool) ([]byte, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if less != nil {
		sort.SliceStable(names, func(i, j int) bool { return less(names[i], names[j]) })
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate, Modified: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// JSONObjectsFrom lists every Longhorn resource of ns through the dynamic
// client, as the kit's LISTs do, and returns the items with apiVersion and
// kind set.
func JSONObjectsFrom(ctx context.Context, dyn dynamic.Interface, ns string) ([]map[string]any, error) {
	var out []map[string]any
	for _, r := range longhorn.AllResources {
		l, err := dyn.Resource(r.GVR()).Namespace(ns).List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue // a kind the served release does not have, as the kit skips it
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", r.GroupResource(), err)
		}
		for _, it := range l.Items {
			it.SetAPIVersion(longhorn.APIVersion)
			it.SetKind(r.Kind)
			out = append(out, it.Object)
		}
	}
	return out, nil
}

// Log line formats of a volume's failing sync, by release, as longhorn-manager logs them.
const (
	Style143 = "v1.4.3" // warning, "Error syncing Longhorn volume <ns>/<vol>"
	Style151 = "v1.5.1" // error, "Failed to sync Longhorn volume <ns>/<vol>"
	Style152 = "v1.5.2" // error, "Failed to sync Longhorn volume", JSONVolume=<ns>/<vol>
)

// BugLine is one longhorn-manager line for the #6642 sync failure of vol,
// as `kubectl logs --timestamps` (and so the kit) returns it: the kubelet's
// timestamp, then the manager's logrus line.
func BugLine(style string, t time.Time, ns, vol, second, first, node string) string {
	err := fmt.Sprintf("failed to sync %s/%s: failed to reconcile engine/replica state for %s: BUG: found the second active engine %s besides %s", ns, vol, vol, second, first)
	return KubeletPrefix(t, ManagerLine(style, t, ns, vol, node, err))
}

// ManagerLine is a logrus text line of a failed volume sync with error err.
func ManagerLine(style string, t time.Time, ns, vol, node, err string) string {
	ts := t.UTC().Format(time.RFC3339)
	switch style {
	case Style143:
		return fmt.Sprintf(`time="%s" level=warning msg="Error syncing Longhorn volume %s/%s" controller=longhorn-volume error="%s" node=%s`, ts, ns, vol, err, node)
	case Style151:
		return fmt.Sprintf(`time="%s" level=error msg="Failed to sync Longhorn volume %s/%s" controller=longhorn-volume error="%s" node=%s`, ts, ns, vol, err, node)
	}
	return fmt.Sprintf(`time="%s" level=error msg="Failed to sync Longhorn volume" JSONVolume=%s/%s controller=longhorn-volume error="%s" file="utils.go:19" func=controller.handleReconcileErrorLogging node=%s`, ts, ns, vol, err, node)
}

// KubeletPrefix puts the kubelet's timestamp before a container log line.
func KubeletPrefix(t time.Time, line string) string {
	return t.UTC().Format(time.RFC3339Nano) + " " + line
}

// InfoLine is an ordinary manager line, for filler.
func InfoLine(t time.Time, i int) string {
	return KubeletPrefix(t, fmt.Sprintf(`time="%s" level=info msg="Starting sync for volume pvc-%06d" controller=longhorn-volume node=node-a`, t.UTC().Format(time.RFC3339), i))
}

// TruncateZip returns the first n bytes of a zip, as an interrupted download
// leaves it.
func TruncateZip(zipData []byte, n int) []byte {
	if n > len(zipData) {
		n = len(zipData)
	}
	return append([]byte(nil), zipData[:n]...)
}

// ZipOffset returns where a file's local header starts in a zip built by Zip,
// so a test can cut inside or after it.
func ZipOffset(zipData []byte, name string) (int64, error) {
	zr, err := zip.NewReader(bytes.NewReader(zipData), int64(len(zipData)))
	if err != nil {
		return 0, err
	}
	for _, f := range zr.File {
		if f.Name == name {
			return f.DataOffset()
		}
	}
	return 0, fmt.Errorf("%s not in the zip", name)
}
