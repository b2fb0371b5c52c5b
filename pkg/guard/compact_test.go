package guard

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The cache keeps what the typed model reads, exactly, and drops the rest.
func TestCompactKeepsWhatClassificationReads(t *testing.T) {
	o := testenv.TwoActiveEngines("v1.5.1", "vol")
	o.Engines[0].Annotations = map[string]string{"big": "x"}
	u, err := testenv.Unstructured("Engine", o.Engines[0])
	if err != nil {
		t.Fatal(err)
	}
	u.SetManagedFields(nil)
	u.Object["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{"manager": "longhorn-manager", "fieldsV1": map[string]any{"f:spec": map[string]any{}}}}
	u.Object["spec"].(map[string]any)["unknownField"] = "dropped"
	u.Object["status"].(map[string]any)["snapshots"] = map[string]any{"snap-1": map[string]any{"name": "snap-1", "children": map[string]any{"volume-head": true}}}

	got, err := compact(longhorn.Engines)(u)
	if err != nil {
		t.Fatal(err)
	}
	c := got.(*unstructured.Unstructured)
	if _, ok := c.Object["metadata"].(map[string]any)["managedFields"]; ok {
		t.Error("managedFields kept")
	}
	if c.GetAnnotations() != nil {
		t.Error("annotations kept")
	}
	if _, ok := c.Object["spec"].(map[string]any)["unknownField"]; ok {
		t.Error("a field the model does not declare was kept")
	}
	var before, after longhorn.Engine
	if err := decode(u, &before); err != nil {
		t.Fatal(err)
	}
	if err := decode(c, &after); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before.SnapshotNames(), after.SnapshotNames()) {
		t.Errorf("snapshot names: %v, want %v", after.SnapshotNames(), before.SnapshotNames())
	}
	before.ManagedFields, before.Annotations, before.Status.Snapshots, after.Status.Snapshots = nil, nil, nil, nil
	if b, a := js(before), js(after); b != a {
		t.Errorf("typed view changed:\n%s\nwant\n%s", a, b)
	}
	if c.GetName() != u.GetName() || volumeOf(longhorn.Engines, c) != "vol" || c.GetKind() != "Engine" {
		t.Errorf("identity lost: %s %s %s", c.GetKind(), c.GetName(), volumeOf(longhorn.Engines, c))
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
