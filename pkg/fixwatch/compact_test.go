package fixwatch

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The cache keeps what the typed model reads, exactly, and drops the rest.
func TestCompactKeepsWhatClassificationReads(t *testing.T) {
	o := testenv.TwoActiveEngines("v1.5.1", "vol")
	u, err := testenv.Unstructured("Engine", o.Engines[0])
	if err != nil {
		t.Fatal(err)
	}
	u.SetAnnotations(map[string]string{"big": "x"})
	u.SetManagedFields(nil)
	u.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "longhorn-manager", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}
	u.Object["spec"].(map[string]any)["unknownField"] = "dropped"
	u.Object["status"].(map[string]any)["snapshots"] = map[string]any{"snap-1": map[string]any{"name": "snap-1", "children": map[string]any{"volume-head": true}}}

	got, err := compact(longhorn.Engines)(u)
	if err != nil {
		t.Fatal(err)
	}
	after, ok := got.(*longhorn.Engine)
	if !ok {
		t.Fatalf("the cache holds %T, want *longhorn.Engine", got)
	}
	if b := js(after); strings.Contains(b, "managedFields") || strings.Contains(b, "big") || strings.Contains(b, "finalizers") {
		t.Errorf("metadata the model does not read kept: %s", b)
	}
	var before longhorn.Engine
	if err := decode(u, &before); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before.SnapshotNames(), after.SnapshotNames()) {
		t.Errorf("snapshot names: %v, want %v", after.SnapshotNames(), before.SnapshotNames())
	}
	if after.Status.Snapshots["snap-1"] != nil {
		t.Error("snapshot details kept")
	}
	snaps := after.Status.Snapshots
	before.Status.Snapshots, after.Status.Snapshots = nil, nil
	if b, a := js(before), js(after); b != a {
		t.Errorf("typed view changed:\n%s\nwant\n%s", a, b)
	}
	after.Status.Snapshots = snaps
	if after.Name != u.GetName() || volumeOf(longhorn.Engines, got) != "vol" || objectMeta(got).GetName() != u.GetName() {
		t.Errorf("identity lost: %s %s", after.Name, volumeOf(longhorn.Engines, got))
	}
	// Typing is idempotent: an object typed already is stored as it is.
	if again, _ := compact(longhorn.Engines)(got); again != got {
		t.Error("a typed object was transformed again")
	}
}

// An object the model cannot decode is kept whole, still found by its
// volume, and reading it reports why.
func TestCompactKeepsUndecodable(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "longhorn.io/v1beta2", "kind": "Engine",
		"metadata": map[string]any{"name": "e1", "namespace": "longhorn-system"},
		"spec":     map[string]any{"volumeName": "vol", "active": "yes"},
	}}
	got, err := compact(longhorn.Engines)(u)
	if err != nil {
		t.Fatal(err)
	}
	if got != any(u) {
		t.Fatalf("undecodable object replaced by %T", got)
	}
	if v := volumeOf(longhorn.Engines, got); v != "vol" {
		t.Errorf("volumeOf = %q, want vol", v)
	}
	if _, err := cached[longhorn.Engine](got); err == nil {
		t.Error("reading an undecodable engine did not fail")
	}
	if d := describe(longhorn.Engines, got); d != "(undecodable)" {
		t.Errorf("describe = %q", d)
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
