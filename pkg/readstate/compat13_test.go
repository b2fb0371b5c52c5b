package readstate

import (
	"reflect"
	"testing"
)

// Every lower-cased Go field name maps to one JSON name; a clash would make
// the 1.3 mapping pick a field at random.
func TestJSONNames13(t *testing.T) {
	if len(ambiguous13) > 0 {
		t.Errorf("lower-cased names claimed by two JSON names: %v", ambiguous13)
	}
	for low, want := range map[string]string{
		"nodeid": "nodeID", "migrationnodeid": "migrationNodeID", "currentnodeid": "currentNodeID",
		"currentmigrationnodeid": "currentMigrationNodeID", "replicamodemap": "replicaModeMap", "enginename": "engineName",
		"creationtimestamp": "creationTimestamp", "deletiontimestamp": "deletionTimestamp", "ownerreferences": "ownerReferences",
		"desirestate": "desireState", "currentstate": "currentState", "standby": "Standby", "instancemanagername": "instanceManagerName",
	} {
		if got := jsonNames13[low]; got != want {
			t.Errorf("jsonNames13[%q] = %q, want %q", low, got, want)
		}
	}
}

func TestTranslate13(t *testing.T) {
	in := map[string]any{
		"typemeta":   map[string]any{"kind": "Engine", "apiversion": ""},
		"objectmeta": map[string]any{"name": "e", "creationtimestamp": map[string]any{"time": "2022-01-01T00:00:00Z"}, "labels": map[string]any{"nodeid": "label keys stay"}},
		"spec": map[string]any{
			"instancespec": map[string]any{"volumename": "v", "nodeid": "n"},
			"active":       true,
		},
		"status": map[string]any{
			"instancestatus": map[string]any{"currentstate": "running"},
			"replicamodemap": map[string]any{"v-r-nodeid": "RW"},
			"conditions":     []any{map[string]any{"type": "Ready", "lasttransitiontime": "x"}},
		},
	}
	want := map[string]any{
		"kind": "Engine", "apiVersion": "",
		"metadata": map[string]any{"name": "e", "creationTimestamp": "2022-01-01T00:00:00Z", "labels": map[string]any{"nodeid": "label keys stay"}},
		"spec":     map[string]any{"volumeName": "v", "nodeID": "n", "active": true},
		"status": map[string]any{
			"currentState":   "running",
			"replicaModeMap": map[string]any{"v-r-nodeid": "RW"},
			"conditions":     []any{map[string]any{"type": "Ready", "lastTransitionTime": "x"}},
		},
	}
	if got := translate13(in); !reflect.DeepEqual(got, want) {
		t.Errorf("translate13:\n got %v\nwant %v", got, want)
	}
}
