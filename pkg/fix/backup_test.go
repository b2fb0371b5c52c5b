package fix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func engineU(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "longhorn.io/v1beta2", "kind": "Engine",
		"metadata": map[string]any{
			"name": name, "namespace": "longhorn-system", "uid": "u-1", "resourceVersion": "42",
			"creationTimestamp": "2024-01-01T00:00:00Z", "generation": int64(3),
			"managedFields":   []any{map[string]any{"manager": "longhorn-manager"}},
			"labels":          map[string]any{"longhornvolume": "vol"},
			"finalizers":      []any{"longhorn.io"},
			"ownerReferences": []any{map[string]any{"apiVersion": "longhorn.io/v1beta2", "kind": "Volume", "name": "vol", "uid": "v-1"}},
		},
		"spec":   map[string]any{"active": true, "nodeID": "node-a", "volumeName": "vol"},
		"status": map[string]any{"currentState": "running"},
	}}
}

func TestBackupSaveIsRestorable(t *testing.T) {
	b, err := OpenBackup(filepath.Join(t.TempDir(), "bk"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	in := engineU("vol-e-1")
	path, err := b.Save("vol", "line one\nline two", []*unstructured.Unstructured{in})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "vol.yaml" {
		t.Errorf("file %s", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "# line one\n# line two\n") {
		t.Errorf("header missing:\n%s", raw)
	}
	docs := strings.Split(string(raw), "---\n")
	if len(docs) != 2 {
		t.Fatalf("want the header and one document, got %d parts:\n%s", len(docs), raw)
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(docs[1]), &obj); err != nil {
		t.Fatal(err)
	}
	item := unstructured.Unstructured{Object: obj}
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		if _, found, _ := unstructured.NestedFieldNoCopy(item.Object, "metadata", f); found {
			t.Errorf("metadata.%s kept; kubectl create would refuse or apply would conflict", f)
		}
	}
	if item.GetName() != "vol-e-1" || item.GetLabels()["longhornvolume"] != "vol" || len(item.GetFinalizers()) != 1 || len(item.GetOwnerReferences()) != 1 {
		t.Errorf("identity not kept: %+v", item.Object["metadata"])
	}
	if active, _, _ := unstructured.NestedBool(item.Object, "spec", "active"); !active {
		t.Error("spec not kept")
	}
	if s, _, _ := unstructured.NestedString(item.Object, "status", "currentState"); s != "running" {
		t.Error("status not kept")
	}
	// The input is not modified.
	if in.GetUID() != "u-1" || in.GetResourceVersion() != "42" {
		t.Error("Save changed the object it was given")
	}

	// A second backup of the same volume never overwrites the first.
	path2, err := b.Save("vol", "again", []*unstructured.Unstructured{in})
	if err != nil {
		t.Fatal(err)
	}
	if path2 == path || filepath.Base(path2) != "vol.2.yaml" {
		t.Errorf("second backup at %s", path2)
	}
	if again, _ := os.ReadFile(path); string(again) != string(raw) {
		t.Error("first backup overwritten")
	}
}

func TestActionLogAppendsLines(t *testing.T) {
	dir := t.TempDir()
	b, err := OpenBackup(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Log.Printf("first %s\nwith a newline", "x"); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b, err = OpenBackup(dir)
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Log.Printf("second")
	b.Close()
	raw, _ := os.ReadFile(filepath.Join(dir, ActionLogName))
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " first x with a newline") || !strings.HasSuffix(lines[1], " second") {
		t.Fatalf("log:\n%s", raw)
	}
}
