package fixwatch

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// Findings are counted by whatever type and severity detect reports (a type
// this package has never heard of included); a volume has a first-seen
// series only while its finding lasts, a change of severity keeps the time
// the finding appeared, and the time to a verified repair is measured from
// it even when the volume already reads healthy when the repair ends.
func TestMetricsCountFindingsGenerically(t *testing.T) {
	m := newMetrics()
	t0 := time.Unix(1_000_000, 0)
	novel := &detect.Finding{Type: "SomeFutureType", Severity: detect.SeverityWarning}
	m.classified("vol-a", novel, t0)
	m.classified("vol-b", novel, t0.Add(time.Second))
	m.classified("vol-c", nil, t0)
	if got := testutil.ToFloat64(m.volumes.WithLabelValues("SomeFutureType", "warning")); got != 2 {
		t.Errorf("volumes{SomeFutureType,warning} = %v, want 2", got)
	}
	worse := &detect.Finding{Type: "SomeFutureType", Severity: detect.SeverityCritical}
	m.classified("vol-a", worse, t0.Add(time.Minute))
	if got := testutil.ToFloat64(m.firstSeen.WithLabelValues("vol-a", "SomeFutureType", "critical")); got != float64(t0.Unix()) {
		t.Errorf("first seen after a change of severity = %v, want %v", got, t0.Unix())
	}
	m.repairStarting("vol-a")
	m.classified("vol-a", nil, t0.Add(2*time.Minute)) // healthy before the repair ends
	m.gone("vol-b")
	m.repaired("vol-a", fix.Outcome{Result: fix.ResultRepaired}, t0.Add(90*time.Second))
	if n := testutil.CollectAndCount(m.firstSeen); n != 0 {
		t.Errorf("%d first-seen series left with no finding", n)
	}
	want := `
# HELP longhorn_engines_guard_volumes Watched volumes by the type and severity of their finding (healthy volumes are not counted).
# TYPE longhorn_engines_guard_volumes gauge
longhorn_engines_guard_volumes{severity="critical",type="SomeFutureType"} 0
longhorn_engines_guard_volumes{severity="warning",type="SomeFutureType"} 0
`
	if err := testutil.CollectAndCompare(m.volumes, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.repairs.WithLabelValues("repaired")); got != 1 {
		t.Errorf("repairs_total{repaired} = %v", got)
	}
	h := `
# HELP longhorn_engines_guard_finding_to_repair_seconds Time from a repairable finding appearing to its verified repair.
# TYPE longhorn_engines_guard_finding_to_repair_seconds histogram
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="30"} 0
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="60"} 0
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="90"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="120"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="180"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="300"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="600"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="900"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="1800"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="3600"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="7200"} 1
longhorn_engines_guard_finding_to_repair_seconds_bucket{le="+Inf"} 1
longhorn_engines_guard_finding_to_repair_seconds_sum 90
longhorn_engines_guard_finding_to_repair_seconds_count 1
`
	if err := testutil.CollectAndCompare(m.toRepair, strings.NewReader(h)); err != nil {
		t.Error(err)
	}
	// The Longhorn version relabels build_info: one series, the new one.
	m.setLonghornVersion("v1.5.1")
	m.setLonghornVersion("v1.6.0")
	if n := testutil.CollectAndCount(m.build); n != 1 {
		t.Errorf("%d build_info series, want 1", n)
	}
}
