package fixwatch

import (
	"bytes"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The watch's health is in the metrics: every interruption and expiry of a
// watch counts as an error of its resource, every list after the first as
// a re-list; a routine re-watch counts as neither.
func TestWatchHealthMetrics(t *testing.T) {
	g := New(Config{Namespace: "longhorn-system"}, newStamper(&bytes.Buffer{}), newStamper(&bytes.Buffer{}))
	eng, vols := longhorn.Engines, longhorn.Volumes
	g.resumed(eng, true) // the first list
	g.resumed(vols, true)
	engineOutage(g)
	g.resumed(vols, false)
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"watch_errors_total{engines}", testutil.ToFloat64(g.m.watchErrors.WithLabelValues(eng.Plural)), 3},
		{"watch_relists_total{engines}", testutil.ToFloat64(g.m.relists.WithLabelValues(eng.Plural)), 2},
		{"watch_errors_total{volumes}", testutil.ToFloat64(g.m.watchErrors.WithLabelValues(vols.Plural)), 0},
		{"watch_relists_total{volumes}", testutil.ToFloat64(g.m.relists.WithLabelValues(vols.Plural)), 0},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
