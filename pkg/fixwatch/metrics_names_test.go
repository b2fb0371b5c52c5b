package fixwatch

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// gatheredNames returns the names of every series family the guard's
// registry exports once each labelled metric has a series, with the
// _bucket, _sum and _count series of a histogram.
func gatheredNames(t *testing.T, m *metrics) []string {
	t.Helper()
	now := time.Unix(1_000_000, 0)
	f := &detect.Finding{Type: detect.TypeNoActiveEngine, Severity: detect.SeverityWarning}
	m.classified("vol-a", f, now)
	m.refused(f)
	m.repaired("vol-a", fix.Outcome{Result: fix.ResultRepaired}, now)
	m.relists.WithLabelValues("engines").Inc()
	m.watchErrors.WithLabelValues("engines").Inc()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range fams {
		n := mf.GetName()
		if !strings.HasPrefix(n, MetricsPrefix) {
			continue
		}
		names = append(names, n)
		if mf.GetType().String() == "HISTOGRAM" {
			names = append(names, n+"_bucket", n+"_sum", n+"_count")
		}
	}
	return names
}

// The guard's metric names are the ones its alerts, their rule tests and
// docs/observability.md use: a renamed metric would otherwise leave an
// alert that never fires (promtool cannot know the name is wrong) and a
// sample scrape that no guard produces. The docs' table lists every metric,
// and Prometheus' own linter finds nothing against its naming conventions.
func TestMetricNamesAreTheDocumentedOnes(t *testing.T) {
	m := newMetrics()
	names := gatheredNames(t, m)
	if len(names) == 0 {
		t.Fatal("the registry exports no metric of the guard")
	}
	used := regexp.MustCompile(regexp.QuoteMeta(MetricsPrefix) + `[a-z0-9_]+`)
	for _, file := range []string{"../../deploy/guard-alerts.yaml", "../../test/alerts/guard-alerts.test.yaml", "../../docs/observability.md"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, n := range used.FindAllString(string(b), -1) {
			seen++
			if !slices.Contains(names, n) {
				t.Errorf("%s uses %s, which the guard does not export (it exports %v)", file, n, names)
			}
		}
		if seen == 0 {
			t.Errorf("%s names no metric of the guard", file)
		}
	}

	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\| (?:gauge|counter|histogram)").FindAllStringSubmatch(string(doc), -1) {
		rows = append(rows, MetricsPrefix+r[1])
	}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if !slices.Contains(rows, base) && !slices.Contains(rows, n) {
			t.Errorf("docs/observability.md's metrics table has no row for %s", n)
		}
	}
	for _, r := range rows {
		if !slices.Contains(names, r) {
			t.Errorf("docs/observability.md's metrics table lists %s, which the guard does not export", r)
		}
	}

	problems, err := testutil.GatherAndLint(m.reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, MetricsPrefix) {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
}
