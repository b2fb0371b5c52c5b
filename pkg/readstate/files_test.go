package readstate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func toYAML(t testing.TB, v any) string { return string(testenv.KubectlYAML(t, v)) }

func toJSON(t testing.TB, v any) string {
	t.Helper()
	j, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	return string(j)
}

func kubectlList(items []map[string]any) map[string]any {
	its := make([]any, len(items))
	for i := range items {
		its[i] = items[i]
	}
	return map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": its}
}

func loadFiles(t *testing.T, stdin string, names ...string) (*Offline, *warnings, error) {
	t.Helper()
	w := &warnings{}
	off, err := LoadFiles(context.Background(), names, strings.NewReader(stdin), OfflineOptions{Warnf: w.f})
	return off, w, err
}

// Every input shape yields the same state.
func TestLoadFilesShapes(t *testing.T) {
	objs := fxObjects(fxNS, "v1.4.3")
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var multi, stream strings.Builder
	for _, o := range objs {
		multi.WriteString("---\n" + toYAML(t, o))
		stream.WriteString(toJSON(t, o) + "\n")
	}
	kit, err := testenv.ListYAML(longhorn.APIVersion, "Engine", nil, true)
	if err != nil {
		t.Fatal(err)
	}
	var singles []string
	if err := os.Mkdir(filepath.Join(dir, "singles"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, o := range objs {
		singles = append(singles, write(filepath.Join("singles", string(rune('a'+i))+".yaml"), toYAML(t, o)))
	}
	cases := map[string][]string{
		"YAML List":          {write("list.yaml", toYAML(t, kubectlList(objs)))},
		"JSON List":          {write("list.json", toJSON(t, kubectlList(objs)))},
		"multi-document":     {write("multi.yaml", multi.String())},
		"JSON stream":        {write("stream.json", stream.String())},
		"single objects":     singles,
		"list plus repeats":  {write("list2.yaml", toYAML(t, kubectlList(objs))), singles[3], write("empty-kit-list.yaml", string(kit))},
		"stdin (YAML List)":  {Stdin},
		"folder of singles":  {filepath.Dir(singles[0])},
		"stdin given twice":  {Stdin, Stdin},
		"mixed file + stdin": {singles[0], Stdin},
	}
	var want string
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			stdin := ""
			if strings.HasPrefix(name, "stdin") || strings.Contains(name, "stdin") {
				stdin = toYAML(t, kubectlList(objs))
			}
			off, w, err := loadFiles(t, stdin, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, w)
			}
			if len(w.lines) != 0 && name != "list plus repeats" {
				t.Errorf("warnings:\n%s", w)
			}
			st := off.State
			if st.Namespace != fxNS || st.Version.String() != "v1.4.3" || off.Source != "files" || !st.InstanceManagersRead || off.OrphansUnreliable != "" {
				t.Errorf("namespace %q version %s source %q ims %t orphans %q", st.Namespace, st.Version, off.Source, st.InstanceManagersRead, off.OrphansUnreliable)
			}
			got := summary(st)
			if want == "" {
				want = got
			}
			if got != want || len(st.Volumes) != 3 || len(st.Engines) != 4 {
				t.Errorf("state:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// Ages count from when the files were written; stdin means now.
func TestLoadFilesNow(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "dump.yaml")
	if err := os.WriteFile(p, []byte(toYAML(t, kubectlList(fxObjects(fxNS, "v1.5.1")))), 0o644); err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(p, mod, mod); err != nil {
		t.Fatal(err)
	}
	off, _, err := loadFiles(t, "", p)
	if err != nil {
		t.Fatal(err)
	}
	if !off.State.Now.Equal(mod) {
		t.Errorf("now %s, want the file time %s", off.State.Now, mod)
	}
	before := time.Now().Add(-time.Second)
	off, _, err = loadFiles(t, toYAML(t, kubectlList(fxObjects(fxNS, "v1.5.1"))), Stdin)
	if err != nil {
		t.Fatal(err)
	}
	if off.State.Now.Before(before) {
		t.Errorf("stdin: now %s is not the present", off.State.Now)
	}
}

func TestLoadFilesProblems(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(toYAML(t, kubectlList(fxObjects(fxNS, "v1.4.3")))), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"kind":"Engine","metadata":{"name":"x"`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Pods are read (where workloads run), so the file with nothing the
	// plugin reads holds a ConfigMap.
	pods := filepath.Join(dir, "configmaps.yaml")
	if err := os.WriteFile(pods, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	typed := filepath.Join(dir, "typed.yaml")
	if err := os.WriteFile(typed, []byte("apiVersion: longhorn.io/v1beta2\nkind: Engine\nmetadata:\n  name: e-bad\n  namespace: longhorn-system\nspec:\n  active: \"yes\"\n---\napiVersion: longhorn.io/v1beta1\nkind: Volume\nmetadata:\n  name: old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "old.yaml")
	if err := os.WriteFile(old, []byte("apiVersion: longhorn.io/v1beta1\nkind: Volume\nmetadata:\n  name: old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")

	off, w, err := loadFiles(t, "", good, bad, pods, typed, old, missing)
	if err != nil {
		t.Fatalf("%v\n%s", err, w)
	}
	w.has(t, "bad.json", "JSON does not parse")
	w.has(t, "configmaps.yaml", "no Longhorn objects")
	w.has(t, "typed.yaml", "2 parts could not be read", `Engine "e-bad"`)
	w.has(t, "old.yaml", `Volume "old" is longhorn.io/v1beta1: only longhorn.io/v1beta2 is read`)
	w.has(t, "missing.yaml", "no such file")
	if len(w.lines) != 5 {
		t.Errorf("want one line per file, got:\n%s", w)
	}
	if len(off.State.Volumes) != 3 || off.OrphansUnreliable == "" {
		t.Errorf("%d volumes, orphans %q", len(off.State.Volumes), off.OrphansUnreliable)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing Longhorn", []string{pods}, "no Longhorn objects found in the given files"},
		{"nothing readable", []string{missing}, "none of the given files could be read"},
		{"empty stdin", []string{Stdin}, "no Longhorn objects found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, w, err := loadFiles(t, "", tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q (warnings: %s)", err, tc.want, w)
			}
		})
	}
}

func TestLoadFilesNamespaceAndVersion(t *testing.T) {
	dir := t.TempDir()
	two := filepath.Join(dir, "two.yaml")
	objs := append(fxObjects("lh-a", "v1.5.1"), fxObjects("lh-b", "v1.4.3")...)
	if err := os.WriteFile(two, []byte(toYAML(t, kubectlList(objs))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadFiles(t, "", two); err == nil || !strings.Contains(err.Error(), "several namespaces (lh-a, lh-b)") {
		t.Errorf("err = %v", err)
	}
	w := &warnings{}
	off, err := LoadFiles(context.Background(), []string{two}, nil, OfflineOptions{Namespace: "lh-b", Warnf: w.f})
	if err != nil || off.State.Namespace != "lh-b" || off.State.Version.String() != "v1.4.3" || len(off.State.Volumes) != 3 {
		t.Errorf("-n lh-b: %v %+v", err, off)
	}

	// Hand-written objects without a namespace join the chosen one; no
	// version setting means an unknown version, said once.
	bare := filepath.Join(dir, "bare.yaml")
	if err := os.WriteFile(bare, []byte("apiVersion: longhorn.io/v1beta2\nkind: Volume\nmetadata:\n  name: v1\nspec:\n  nodeID: \"n\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	off, w2, err := loadFiles(t, "", bare)
	if err != nil {
		t.Fatal(err)
	}
	w2.has(t, "Longhorn version unknown", "kubectl get settings.longhorn.io current-longhorn-version")
	if off.State.Namespace != longhorn.DefaultNamespace || len(off.State.Volumes) != 1 || off.State.Version.Known() || off.State.InstanceManagersRead {
		t.Errorf("state %+v", off.State)
	}

	// Engines without volumes: nothing to classify, and no orphan checks.
	eng := filepath.Join(dir, "engines.yaml")
	if err := os.WriteFile(eng, []byte(toYAML(t, fxEngine(fxNS, "v", "v-e-0", "n", true, "r"))), 0o644); err != nil {
		t.Fatal(err)
	}
	off, w3, err := loadFiles(t, "", eng)
	if err != nil {
		t.Fatal(err)
	}
	w3.has(t, "no Volume objects")
	if off.OrphansUnreliable == "" {
		t.Error("orphan checks would report every engine")
	}
}
