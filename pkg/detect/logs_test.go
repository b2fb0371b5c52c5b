package detect

import (
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// logsState: "stuck" has two active engines, "fine" one running engine.
func logsState(version string) *longhorn.State {
	st := &longhorn.State{Namespace: "longhorn-system", Version: longhorn.MustParseVersion(version),
		Now: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	vol := func(name string) longhorn.Volume {
		v := longhorn.Volume{}
		v.Name = name
		v.Spec.NodeID, v.Status.CurrentNodeID = "node-b", "node-b"
		v.Status.State, v.Status.Robustness = longhorn.VolumeStateAttached, longhorn.RobustnessHealthy
		v.Spec.Migratable, v.Spec.AccessMode = true, longhorn.AccessModeRWX
		return v
	}
	eng := func(vol, name, node string) longhorn.Engine {
		e := longhorn.Engine{}
		e.Name = name
		e.CreationTimestamp = metav1.NewTime(st.Now.Add(-time.Hour))
		e.Spec.VolumeName, e.Spec.NodeID, e.Spec.Active, e.Spec.DesireState = vol, node, true, longhorn.StateRunning
		e.Status.CurrentState, e.Status.Endpoint = longhorn.StateRunning, "/dev/longhorn/"+vol
		e.Status.ReplicaModeMap = map[string]string{vol + "-r": longhorn.ModeRW}
		return e
	}
	rep := func(vol, engine string) longhorn.Replica {
		r := longhorn.Replica{}
		r.Name = vol + "-r"
		r.Spec.VolumeName, r.Spec.EngineName, r.Spec.Active = vol, engine, true
		return r
	}
	st.Volumes = []longhorn.Volume{vol("stuck"), vol("fine")}
	st.Engines = []longhorn.Engine{eng("stuck", "stuck-e-0", "node-a"), eng("stuck", "stuck-e-1", "node-b"), eng("fine", "fine-e-0", "node-b")}
	st.Replicas = []longhorn.Replica{rep("stuck", "stuck-e-1"), rep("fine", "fine-e-0")}
	return st
}

func bugEvidence(vol string, first time.Time, span time.Duration) LogEvidence {
	ev := LogEvidence{Count: 4, Message: "BUG: found the second active engine " + vol + "-e-1 besides " + vol + "-e-0", Files: []string{"logs/m.log"}}
	if !first.IsZero() {
		ev.FirstSeen, ev.LastSeen = first, first.Add(span)
	}
	return ev
}

func TestAttachLogs(t *testing.T) {
	st := logsState("v1.4.3")
	res := Classify(st, Options{})
	if res.Healthy != 1 || len(res.Findings) != 1 || res.Findings[0].Type != TypeMultipleActiveEngines {
		t.Fatalf("fixture classification %+v", res)
	}
	t1 := st.Now.Add(-2 * time.Hour)
	logs := map[string]LogEvidence{
		"stuck":   bugEvidence("stuck", t1, time.Hour),
		"fine":    bugEvidence("fine", t1, time.Minute),
		"deleted": bugEvidence("deleted", time.Time{}, 0),
	}
	AttachLogs(st, &res, logs, Options{})

	var vols []string
	for _, f := range res.Findings {
		vols = append(vols, f.Volume+"/"+string(f.Type)+"/"+string(f.Severity))
	}
	want := []string{"deleted/SyncErrorInLogs/warning", "fine/SyncErrorInLogs/warning", "stuck/MultipleActiveEngines/critical"}
	if !reflect.DeepEqual(vols, want) {
		t.Fatalf("findings %v, want %v", vols, want)
	}
	if res.Healthy != 0 || res.Volumes != 2 || !res.NeedsAttention() {
		t.Errorf("healthy %d, volumes %d", res.Healthy, res.Volumes)
	}
	stuck := res.Findings[2]
	if stuck.Evidence.Logs == nil || !reflect.DeepEqual(*stuck.Evidence.Logs, logs["stuck"]) || stuck.Action != ActionDeactivate {
		t.Errorf("stuck finding %+v", stuck)
	}
	fine := res.Findings[1]
	if fine.Action != ActionNone || len(fine.Stale) != 0 || fine.Stale == nil || len(fine.Evidence.Engines) != 1 ||
		fine.Evidence.Engines[0].Name != "fine-e-0" || fine.Evidence.CurrentNodeID != "node-b" || fine.Evidence.Logs.Count != 4 ||
		!strings.Contains(fine.Reason, `"BUG: found the second active engine fine-e-1 besides fine-e-0" 4 time(s) from 2024-05-01T10:00:00Z to 2024-05-01T10:01:00Z`) ||
		!strings.Contains(fine.Reason, "objects show no second active engine") {
		t.Errorf("fine finding %+v", fine)
	}
	del := res.Findings[0]
	if del.Evidence.Engines == nil || del.Evidence.Replicas == nil || len(del.Evidence.Engines) != 0 ||
		!strings.Contains(del.Reason, "not among the objects read") || strings.Contains(del.Reason, " at ") {
		t.Errorf("deleted finding %+v", del)
	}
}

// On releases with the fix, a short burst of the BUG error on a volume that
// is healthy now is the expected window after a confirm: info, exit 0.
func TestAttachLogsFixedReleases(t *testing.T) {
	t1 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		version string
		ev      LogEvidence
		want    Severity
	}{
		{"v1.5.2", bugEvidence("fine", t1, 30*time.Second), SeverityInfo},
		{"v1.4.4", bugEvidence("fine", t1, 0), SeverityInfo},
		{"v1.6.0", bugEvidence("fine", t1, time.Hour), SeverityWarning},      // lasted too long
		{"v1.6.0", bugEvidence("fine", time.Time{}, 0), SeverityWarning},     // no times: cannot tell
		{"v1.5.1", bugEvidence("fine", t1, 30*time.Second), SeverityWarning}, // affected release
		{"v1.3.3", bugEvidence("fine", t1, 30*time.Second), SeverityWarning}, // affected release
		{"v1.6.0", bugEvidence("gone", t1, 30*time.Second), SeverityWarning}, // no objects to vouch for it
		{"v1.6.0", bugEvidence("fine", t1, 11*time.Minute), SeverityWarning}, // past the threshold
		{"v1.6.0", bugEvidence("fine", t1, 9*time.Minute), SeverityInfo},     // within it
	}
	for _, tt := range tests {
		st := logsState(tt.version)
		st.Volumes, st.Engines, st.Replicas = st.Volumes[1:], st.Engines[2:], st.Replicas[1:] // only "fine"
		res := Classify(st, Options{})
		vol := "fine"
		if strings.Contains(tt.ev.Message, "gone") {
			vol = "gone"
		}
		AttachLogs(st, &res, map[string]LogEvidence{vol: tt.ev}, Options{PendingThreshold: 10 * time.Minute})
		if len(res.Findings) != 1 || res.Findings[0].Severity != tt.want {
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.Volume+"/"+string(f.Type)+"/"+string(f.Severity))
			}
			t.Errorf("%s %s span %s: %v, want one finding of severity %s", tt.version, vol, tt.ev.LastSeen.Sub(tt.ev.FirstSeen), got, tt.want)
			continue
		}
		if tt.want == SeverityInfo && (res.NeedsAttention() || !strings.Contains(res.Findings[0].Reason, "expected for a moment after each migration confirm")) {
			t.Errorf("%s: %+v", tt.version, res.Findings[0])
		}
	}
}

func TestAttachLogsNothing(t *testing.T) {
	st := logsState("v1.4.3")
	res := Classify(st, Options{})
	before := len(res.Findings)
	AttachLogs(st, &res, nil, Options{})
	if len(res.Findings) != before || res.Healthy != 1 || res.Findings[0].Evidence.Logs != nil {
		t.Errorf("empty evidence changed the result: %+v", res)
	}
}
