package fixwatch

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// MetricsPrefix starts the name of every metric of the guard.
const MetricsPrefix = "longhorn_engines_guard_"

// metrics are the guard's Prometheus metrics, in a registry of its own (no
// global state: tests run several guards in one process). Finding types and
// severities are counted as detect reports them, so a new type needs no
// change here. The only per-volume label is on findings that exist: a
// healthy volume has no series. docs/observability.md describes each one.
type metrics struct {
	reg *prometheus.Registry

	watched      prometheus.Gauge
	volumes      *prometheus.GaugeVec
	firstSeen    *prometheus.GaugeVec
	repairs      *prometheus.CounterVec
	refusals     *prometheus.CounterVec
	toRepair     prometheus.Histogram
	lastFull     prometheus.Gauge
	lastClassify prometheus.Gauge
	relists      *prometheus.CounterVec
	watchErrors  *prometheus.CounterVec
	build        *prometheus.GaugeVec
	windowEnd    prometheus.Gauge

	mu      sync.Mutex
	current map[string]seen // volume -> its finding now
	counts  map[[2]string]int
	started map[string]time.Time // volume -> its finding's first-seen time, while repairing
	lhVer   string
}

// seen is the finding a volume is in and since when.
type seen struct {
	typ, severity string
	since         time.Time
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		watched: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricsPrefix + "watched_volumes",
			Help: "Volumes the guard watches."}),
		volumes: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricsPrefix + "volumes",
			Help: "Watched volumes by the type and severity of their finding (healthy volumes are not counted)."}, []string{"type", "severity"}),
		firstSeen: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricsPrefix + "finding_first_seen_timestamp_seconds",
			Help: "When each volume with a finding entered it (Unix time); there is a series only while the finding lasts."}, []string{"volume", "type", "severity"}),
		repairs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricsPrefix + "repairs_total",
			Help: "Repairs the guard ran, by outcome (repaired, failed, skipped, timed-out, inverted, superseded, changed, dry-run, not-attempted)."}, []string{"outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricsPrefix + "refusals_total",
			Help: "Volumes found needing attention in a state the guard does not repair, by finding type."}, []string{"reason"}),
		toRepair: prometheus.NewHistogram(prometheus.HistogramOpts{Name: MetricsPrefix + "finding_to_repair_seconds",
			Help:    "Time from a repairable finding appearing to its verified repair.",
			Buckets: []float64{30, 60, 90, 120, 180, 300, 600, 900, 1800, 3600, 7200}}),
		lastFull: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricsPrefix + "last_full_classification_timestamp_seconds",
			Help: "When every watched volume was last classified (Unix time): at start, after an upgrade and every few minutes."}),
		lastClassify: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricsPrefix + "last_classification_timestamp_seconds",
			Help: "When a volume was last classified (Unix time)."}),
		relists: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricsPrefix + "watch_relists_total",
			Help: "Lists of a watched resource after its first one (an expired watch or a restarted API server)."}, []string{"resource"}),
		watchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: MetricsPrefix + "watch_errors_total",
			Help: "Interruptions of the watch of a resource (errors, lost connections, expired resourceVersions)."}, []string{"resource"}),
		build: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: MetricsPrefix + "build_info",
			Help: "Always 1: the plugin's version and the Longhorn version the guard classifies with."}, []string{"version", "revision", "goversion", "longhorn_version"}),
		windowEnd: prometheus.NewGauge(prometheus.GaugeOpts{Name: MetricsPrefix + "window_end_timestamp_seconds",
			Help: "When the guard's window (--for) ends (Unix time): the guard should run until then."}),
		current: map[string]seen{},
		counts:  map[[2]string]int{},
	}
	m.reg.MustRegister(m.watched, m.volumes, m.firstSeen, m.repairs, m.refusals, m.toRepair, m.lastFull, m.lastClassify,
		m.relists, m.watchErrors, m.build, m.windowEnd,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Outcomes that mean trouble exist at 0 from the start, so that
	// increase() sees their first one.
	for _, r := range []fix.Result{fix.ResultRepaired, fix.ResultFailed, fix.ResultSkipped, fix.ResultTimedOut, fix.ResultInverted} {
		m.repairs.WithLabelValues(string(r))
	}
	m.setLonghornVersion("unknown")
	return m
}

// buildVersion is the plugin's version and revision from the binary's build
// information (the module version a release build stamps).
func buildVersion() (version, revision, goVersion string) {
	version, revision, goVersion = "dev", "unknown", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	goVersion = bi.GoVersion
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		version = v
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			revision = s.Value
		}
	}
	return
}

// setLonghornVersion relabels build_info after the Longhorn version the
// guard classifies with changed (at start, and after an upgrade).
func (m *metrics) setLonghornVersion(v string) {
	if v == "" {
		v = "unknown"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if v == m.lhVer {
		return
	}
	ver, rev, gov := buildVersion()
	if m.lhVer != "" {
		m.build.DeleteLabelValues(ver, rev, gov, m.lhVer)
	}
	m.lhVer = v
	m.build.WithLabelValues(ver, rev, gov, v).Set(1)
}

// classified records a volume's classification (f nil: healthy).
func (m *metrics) classified(vol string, f *detect.Finding, now time.Time) {
	m.lastClassify.Set(float64(now.UnixMilli()) / 1000)
	m.mu.Lock()
	defer m.mu.Unlock()
	old, had := m.current[vol]
	if f == nil {
		if had {
			m.dropLocked(vol, old)
		}
		return
	}
	cur := seen{typ: string(f.Type), severity: string(f.Severity), since: now}
	if had && old.typ == cur.typ && old.severity == cur.severity {
		return
	}
	if had {
		m.dropLocked(vol, old)
		if old.typ == cur.typ {
			cur.since = old.since // a change of severity is the same finding
		}
	}
	m.current[vol] = cur
	k := [2]string{cur.typ, cur.severity}
	m.counts[k]++
	m.volumes.WithLabelValues(cur.typ, cur.severity).Set(float64(m.counts[k]))
	m.firstSeen.WithLabelValues(vol, cur.typ, cur.severity).Set(float64(cur.since.UnixMilli()) / 1000)
}

// gone forgets a volume that was deleted.
func (m *metrics) gone(vol string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, had := m.current[vol]; had {
		m.dropLocked(vol, old)
	}
}

func (m *metrics) dropLocked(vol string, old seen) {
	delete(m.current, vol)
	k := [2]string{old.typ, old.severity}
	m.counts[k]--
	// The count of a type stays, at 0, once it was seen: an alert on it
	// then resolves instead of going stale.
	m.volumes.WithLabelValues(old.typ, old.severity).Set(float64(m.counts[k]))
	m.firstSeen.DeleteLabelValues(vol, old.typ, old.severity)
}

// repaired records a repair's outcome and, for a verified repair, how long
// the finding lasted.
func (m *metrics) repaired(vol string, out fix.Outcome, now time.Time) {
	m.repairs.WithLabelValues(string(out.Result)).Inc()
	m.mu.Lock()
	since, ok := m.started[vol]
	delete(m.started, vol)
	m.mu.Unlock()
	if ok && out.Result == fix.ResultRepaired {
		m.toRepair.Observe(now.Sub(since).Seconds())
	}
}

func (m *metrics) refused(f *detect.Finding) { m.refusals.WithLabelValues(string(f.Type)).Inc() }

func (m *metrics) fullClassification(now time.Time, volumes int) {
	m.lastFull.Set(float64(now.UnixMilli()) / 1000)
	m.watched.Set(float64(volumes))
}

// repairStarting remembers when the finding of a volume being repaired
// appeared: by the time the repair is verified, the volume may already
// read healthy.
func (m *metrics) repairStarting(vol string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.started == nil {
		m.started = map[string]time.Time{}
	}
	if s, ok := m.current[vol]; ok {
		m.started[vol] = s.since
	}
}
