package fix

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

func TestDeactivatePatchPinsTheEngine(t *testing.T) {
	var ops []map[string]any
	if err := json.Unmarshal(deactivatePatch(EngineRef{Name: "e", UID: "u-1", ResourceVersion: "42"}), &ops); err != nil {
		t.Fatal(err)
	}
	want := []string{"test /metadata/uid u-1", "test /metadata/resourceVersion 42", "test /spec/active true", "replace /spec/active false"}
	if len(ops) != len(want) {
		t.Fatalf("ops %v", ops)
	}
	for i, op := range ops {
		got := strings.TrimSpace(op["op"].(string) + " " + op["path"].(string) + " " + jsonText(op["value"]))
		if got != want[i] {
			t.Errorf("op %d = %q, want %q", i, got, want[i])
		}
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// write refuses the survivor and unpinned engines before any request (the
// Repairer has no client here: a request would panic).
func TestWriteRefusesSurvivor(t *testing.T) {
	r := &Repairer{Settings: Settings{DryRun: cmdutil.DryRunNone}}
	keep := EngineRef{Name: "keep", UID: "u-keep", ResourceVersion: "1"}
	for _, e := range []EngineRef{keep, {Name: "other", UID: "u-keep", ResourceVersion: "2"}, {Name: "other", UID: "", ResourceVersion: "2"}, {Name: "other", UID: "u", ResourceVersion: ""}} {
		for _, a := range []detect.Action{detect.ActionDeactivate, detect.ActionDelete} {
			if err := r.write(context.Background(), a, keep, e); err == nil || !strings.Contains(err.Error(), "refusing") {
				t.Errorf("write(%s, %+v) = %v", a, e, err)
			}
		}
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		results []Result
		want    int
	}{
		{nil, cmdutil.ExitOK},
		{[]Result{ResultHealthy, ResultRepaired, ResultInFlight, ResultChanged, ResultDryRun}, cmdutil.ExitOK},
		{[]Result{ResultRepaired, ResultSkipped}, cmdutil.ExitNeedsAction},
		{[]Result{ResultRefused}, cmdutil.ExitNeedsAction},
		{[]Result{ResultTimedOut, ResultFailed}, cmdutil.ExitNeedsAction},
		{[]Result{ResultFailed, ResultInverted, ResultRepaired}, cmdutil.ExitAttention},
	}
	for _, tt := range tests {
		var outs []Outcome
		for _, r := range tt.results {
			outs = append(outs, Outcome{Result: r})
		}
		if got := exitCode(outs); got != tt.want {
			t.Errorf("exitCode(%v) = %d, want %d", tt.results, got, tt.want)
		}
	}
}

// A Repairer in client dry-run mode never sends a write, even if a caller
// other than the command reaches write.
func TestWriteRefusesClientDryRun(t *testing.T) {
	r := &Repairer{Settings: Settings{DryRun: cmdutil.DryRunClient}}
	keep := EngineRef{Name: "keep", UID: "u-keep", ResourceVersion: "1"}
	stale := EngineRef{Name: "stale", UID: "u-stale", ResourceVersion: "2"}
	if err := r.write(context.Background(), detect.ActionDelete, keep, stale); err == nil || !strings.Contains(err.Error(), "dry-run=client") {
		t.Errorf("write in client dry run = %v", err)
	}
}
