package readstate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func TestNormalizeNull(t *testing.T) {
	in := map[string]any{
		"a": "null", "b": "keep", "c": nil,
		"nested": map[string]any{"x": "null", "null": "key stays"},
		"list":   []any{"null", "v", map[string]any{"y": "null"}},
	}
	want := map[string]any{
		"a": nil, "b": "keep", "c": nil,
		"nested": map[string]any{"x": nil, "null": "key stays"},
		"list":   []any{nil, "v", map[string]any{"y": nil}},
	}
	if got := normalizeNull(in); !reflect.DeepEqual(got, want) {
		t.Errorf("normalizeNull = %v, want %v", got, want)
	}
}

// The quirk as support-bundle-kit applies it, end to end: empty strings and
// nulls written as "null" read back as empty, and the fields that are not
// strings (a null list, a null time) do not break typed decoding.
func TestNullQuirkRoundTrip(t *testing.T) {
	engine := map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Engine",
		"metadata": map[string]any{"name": "vol-e-1", "namespace": "longhorn-system", "deletionTimestamp": nil, "labels": map[string]any{"longhornnode": ""}},
		"spec":     map[string]any{"volumeName": "vol", "nodeID": "", "active": true, "desireState": "stopped", "engineImage": "img"},
		"status": map[string]any{"currentState": "stopped", "endpoint": "", "ownerID": "", "conditions": nil, "replicaModeMap": nil,
			"snapshots": nil, "port": 0},
	}
	volume := map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": "Volume",
		"metadata": map[string]any{"name": "vol", "namespace": "longhorn-system"},
		"spec":     map[string]any{"nodeID": "", "migrationNodeID": "", "migratable": true},
		"status":   map[string]any{"currentNodeID": "", "currentMigrationNodeID": "", "state": "detached", "conditions": nil, "kubernetesStatus": map[string]any{"pvName": ""}},
	}
	for _, items := range [][]map[string]any{{engine}, {volume}} {
		y, err := testenv.ListYAML(longhorn.APIVersion, items[0]["kind"].(string), items, true)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(y), `"null"`) {
			t.Fatalf("the writer did not apply the quirk:\n%s", y)
		}
		c := newCollector()
		var probs problems
		if err := decodeStream(strings.NewReader(string(y)), &probs, func(o map[string]any) error { return c.add(o, "", "") }); err != nil {
			t.Fatal(err)
		}
		if probs.total != 0 {
			t.Fatalf("problems: %v\n%s", probs.first, y)
		}
		st := c.spaces["longhorn-system"].st
		for _, e := range st.Engines {
			if e.Spec.NodeID != "" || e.Status.Endpoint != "" || e.Status.OwnerID != "" || e.DeletionTimestamp != nil || e.Labels["longhornnode"] != "" {
				t.Errorf("engine read back with quirk values: %+v", e)
			}
			if !e.Spec.Active || e.Spec.VolumeName != "vol" || e.Spec.EngineImage != "img" {
				t.Errorf("engine lost real values: %+v", e.Spec)
			}
		}
		for _, v := range st.Volumes {
			if v.Spec.NodeID != "" || v.Spec.MigrationNodeID != "" || v.Status.CurrentNodeID != "" || v.Status.CurrentMigrationNodeID != "" || v.Migrating() {
				t.Errorf("volume read back with quirk values: %+v", v)
			}
			if !v.Spec.Migratable || v.Status.State != "detached" {
				t.Errorf("volume lost real values: %+v", v)
			}
		}
	}
}
