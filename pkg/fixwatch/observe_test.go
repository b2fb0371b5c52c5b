package fixwatch_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/kubeserver"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// The guard as a citizen of the cluster, on Kubernetes' own API server: the
// Job's own command line (with --metrics-bind-address), as the Job's
// ServiceAccount bound to deploy/rbac-guard.yaml, serves metrics that
// show the stuck volume before the repair and the verified repair after it;
// the repair and its verification are Events on the Longhorn Volume, read
// back through the events API, `kubectl describe` and the plugin's own
// describe. Without the permission to create Events the guard warns once
// and still repairs.
func TestGuardMetricsAndEvents(t *testing.T) {
	ctx, full, e := onKubeServer(t)
	ns := kubeserver.Namespace
	kc, err := full.GuardAccount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	args := jobArgs(t)
	if i := slices.Index(args, "--metrics-bind-address"); i < 0 || i+1 >= len(args) || args[i+1] != ":8080" {
		t.Fatalf("the Job does not serve metrics on :8080: %v", args)
	}

	vol := "vol-observed"
	_, mig := e.produceBug(vol)
	// A settle long enough to scrape the stuck volume before its repair;
	// the Job's flags, then the test's (later flags win).
	const longSettle = 8 * time.Second
	args = append(args, "--settle", longSettle.String(), "--backup-dir", t.TempDir(), "--metrics-bind-address", "127.0.0.1:0")
	g := startCommand(t, e.Ctx, kc, ns, args)
	addr := g.l.metricsAddr()
	if addr == "" {
		t.Fatal("the guard did not report where it serves metrics")
	}
	stuck := map[string]string{"volume": vol, "type": "MultipleActiveEngines"}
	// one scrape gathers the metrics concurrently: it may read the finding
	// set and build_info from before the version was known, so wait for both
	before := scrapeUntil(t, e.Ctx, addr, "the stuck volume", func(m scrape) bool {
		return m.has("finding_first_seen_timestamp_seconds", stuck) && m.has("build_info", map[string]string{"longhorn_version": "v1.4.3"})
	})
	if len(g.outcomes(vol)) > 0 {
		t.Fatal("repaired before the first scrape saw the finding: the before/after comparison proves nothing")
	}
	before.expect(t, "before the repair", []series{
		{"volumes", map[string]string{"type": "MultipleActiveEngines"}, 1},
		{"repairs_total", map[string]string{"outcome": "repaired"}, 0},
		{"build_info", map[string]string{"longhorn_version": "v1.4.3"}, 1},
		{"finding_to_repair_seconds_count", nil, 0},
	})
	seen, _ := before.value("finding_first_seen_timestamp_seconds", stuck)
	// The window the guard-down alert reads: the Job's --for 6h from the start.
	if end, _ := before.value("window_end_timestamp_seconds", nil); math.Abs(end-float64(g.start.Add(6*time.Hour).Unix())) > 60 {
		t.Errorf("window_end_timestamp_seconds %v, want %v (the Job's --for 6h)", end, g.start.Add(6*time.Hour).Unix())
	}
	if last, _ := before.value("last_classification_timestamp_seconds", nil); last < seen {
		t.Errorf("last_classification_timestamp_seconds %v, before the finding was first seen (%v)", last, seen)
	}

	out := g.awaitOutcome(e.Ctx, vol, 1)
	if out.Result != fix.ResultRepaired {
		t.Fatalf("outcome %s: %s", out.Result, out.Detail)
	}
	e.ExpectConverged(vol, testenv.NodeB, mig)
	after := scrapeUntil(t, e.Ctx, addr, "the volume healthy again", func(m scrape) bool { return !m.has("finding_first_seen_timestamp_seconds", stuck) })
	after.expect(t, "after the repair", []series{
		{"volumes", map[string]string{"type": "MultipleActiveEngines"}, 0},
		{"repairs_total", map[string]string{"outcome": "repaired"}, 1},
		{"repairs_total", map[string]string{"outcome": "failed"}, 0},
		{"finding_to_repair_seconds_count", nil, 1},
	})
	if sum, _ := after.value("finding_to_repair_seconds_sum", nil); sum < longSettle.Seconds() {
		t.Errorf("finding to repair took %.3fs, less than --settle %s", sum, longSettle)
	}
	if full, _ := after.value("last_full_classification_timestamp_seconds", nil); full < seen {
		t.Errorf("last full classification at %v, before the finding was first seen (%v)", full, seen)
	}
	if w, _ := after.value("watched_volumes", nil); w < 1 {
		t.Errorf("watched_volumes %v", w)
	}

	// The Events of the repair, as the events API has them.
	evs := awaitRepairEvents(t, e.Ctx, full, ns, vol)
	for _, ev := range evs {
		if ev.Reason == fix.ReasonRepairApplied && (ev.Action != "DeactivateEngine" || !strings.HasPrefix(ev.Note, "deactivated the stale engine; objects written: ") ||
			!strings.Contains(ev.Note, out.Changed[len(out.Changed)-1])) {
			t.Errorf("RepairApplied: action %q, note %q, want DeactivateEngine of %v", ev.Action, ev.Note, out.Changed)
		}
	}
	// kubectl describe and kubectl events find them on the Volume.
	desc, err := kubectl(ctx, full.KubeconfigPath(), "describe", "volumes.longhorn.io", vol, "-n", ns)
	if err != nil {
		t.Fatalf("kubectl describe: %v\n%s", err, desc)
	}
	testenv.Contains(t, "kubectl describe", desc, "RepairApplied", "RepairVerified", volevents.Controller)
	kev, err := kubectl(ctx, full.KubeconfigPath(), "events", "-n", ns, "--for", "volumes.longhorn.io/"+vol)
	if err != nil {
		t.Fatalf("kubectl events: %v\n%s", err, kev)
	}
	testenv.Contains(t, "kubectl events", kev, "RepairApplied", "RepairVerified")
	// The plugin's describe shows them too.
	res := cli(t, full.KubeconfigPath()).Run(e.Ctx, "describe", vol, "-n", ns)
	testenv.Contains(t, "describe", res.Stdout, "Events:", "RepairApplied", "RepairVerified", volevents.Controller)

	res = g.stop()
	if res.Code != 0 {
		t.Errorf("exit %d", res.Code)
	}
	testenv.Contains(t, "stderr", res.Stderr, "serving metrics on http://"+addr+"/metrics")
	lacks(t, "output", res.Stdout+res.Stderr, "forbidden", "no Kubernetes Events")

	t.Run("without permission to create Events", func(t *testing.T) {
		rules := without(without(roleRules(t, "rbac-guard.yaml"), "events", "create"), "events", "patch")
		user, err := full.UserWithRole(ctx, fmt.Sprintf("guard-no-events-%d", userSeq.Add(1)), rules, nil)
		if err != nil {
			t.Fatal(err)
		}
		vol := "vol-no-events"
		_, mig := e.produceBug(vol)
		g := startCommand(t, e.Ctx, user, ns, append(jobArgs(t), "--settle", settle.String(), "--backup-dir", t.TempDir(), "--metrics-bind-address", "0"))
		res := g.repairedAndStopped(e, vol, mig)
		if n := strings.Count(res.Stderr, "warning: no Kubernetes Events will be recorded"); n != 1 {
			t.Errorf("%d warnings about Events, want 1:\n%s", n, res.Stderr)
		}
		testenv.Contains(t, "stderr", res.Stderr, `cannot create events.events.k8s.io in namespace "`+ns+`"`)
		lacks(t, "stderr", res.Stderr, "serving metrics")
		l, err := full.Client().EventsV1().Events(ns).List(e.Ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("regarding.name", vol).String()})
		if err != nil || len(l.Items) != 0 {
			t.Errorf("Events of %s: %v, %v", vol, l, err)
		}
	})

	// A volume in a state the guard does not repair (testenv.Issue4827: two
	// active engines, spec.nodeID empty; no precondition of a repair holds):
	// counted as a refusal by its finding type, a Warning Event on the
	// volume saying why, no repair, and exit code 1 at the end. Last: the
	// volume stays and would make the other guard runs here exit 1.
	t.Run("a state the guard refuses", func(t *testing.T) {
		const vol = "vol-refused"
		o := testenv.Issue4827("v1.4.3", vol)
		o.Version = "" // the simulator's version setting stays
		if err := testenv.Create(e.Ctx, full, o); err != nil {
			t.Fatal(err)
		}
		g := startCommand(t, e.Ctx, kc, ns, append(jobArgs(t), "--settle", settle.String(), "--backup-dir", t.TempDir(), "--metrics-bind-address", "127.0.0.1:0"))
		reason := map[string]string{"reason": "MultipleActiveEngines"}
		m := scrapeUntil(t, e.Ctx, g.l.metricsAddr(), "the refusal", func(m scrape) bool { return m.has("refusals_total", reason) })
		if v, _ := m.value("refusals_total", reason); v != 1 {
			t.Errorf("refusals_total%v = %v, want 1", reason, v)
		}
		if !m.has("finding_first_seen_timestamp_seconds", map[string]string{"volume": vol, "type": "MultipleActiveEngines", "severity": "critical"}) {
			t.Errorf("no first-seen series for the refused volume")
		}
		var evs []eventsv1.Event
		poll(t, e.Ctx, "the refusal's Event", func() bool {
			l, err := full.Client().EventsV1().Events(ns).List(e.Ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("regarding.name", vol).String()})
			if err != nil {
				t.Fatal(err)
			}
			evs = l.Items
			return hasReason(evs, fix.ReasonRepairRefused)
		})
		for _, ev := range evs {
			if ev.Reason != fix.ReasonRepairRefused {
				t.Errorf("unexpected Event %s on %s: %s", ev.Reason, vol, ev.Note)
				continue
			}
			if ev.Type != volevents.Warning || ev.ReportingController != volevents.Controller || ev.Regarding.UID == "" ||
				!strings.Contains(ev.Note, "not safe to repair because") || !strings.HasSuffix(ev.Note, "the guard does not repair this state") {
				t.Errorf("RepairRefused: type %s, controller %s, uid %q, note %q", ev.Type, ev.ReportingController, ev.Regarding.UID, ev.Note)
			}
		}
		if len(g.outcomes(vol)) != 0 {
			t.Errorf("the guard acted on %s: %v", vol, g.outcomes(vol))
		}
		if res := g.stop(); res.Code != 1 {
			t.Errorf("exit %d, want 1: a volume needs attention", res.Code)
		}
	})
}

// TestOneShotFixRecordsItsVerification: `fix VOL --yes`, run once as an
// operator would, records on the Volume the Events the guard records,
// its verification included once Longhorn (the simulator here) has
// converged after the repair.
func TestOneShotFixRecordsItsVerification(t *testing.T) {
	_, full, e := onKubeServer(t)
	ns := kubeserver.Namespace
	vol := "vol-fixed-once"
	_, mig := e.produceBug(vol)
	res := cli(t, full.KubeconfigPath()).Run(e.Ctx, "fix", vol, "-n", ns, "--yes", "--backup-dir", t.TempDir())
	if res.Code != 0 {
		t.Fatalf("fix exit %d", res.Code)
	}
	e.ExpectConverged(vol, testenv.NodeB, mig)
	awaitRepairEvents(t, e.Ctx, full, ns, vol)
}

// awaitRepairEvents waits for the RepairApplied and RepairVerified Events of
// vol, as the events API has them, checks that each is the tool's own
// about the Longhorn Volume, and returns them.
func awaitRepairEvents(t *testing.T, ctx context.Context, full *kubeserver.Server, ns, vol string) []eventsv1.Event {
	t.Helper()
	var evs []eventsv1.Event
	sel := fields.OneTermEqualSelector("regarding.name", vol).String()
	poll(t, ctx, "the repair's Events", func() bool {
		l, err := full.Client().EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		evs = l.Items
		return hasReason(evs, fix.ReasonRepairApplied) && hasReason(evs, fix.ReasonRepairVerified)
	})
	for _, ev := range evs {
		if ev.ReportingController != volevents.Controller || ev.Regarding.Kind != "Volume" || ev.Regarding.APIVersion != "longhorn.io/v1beta2" || ev.Regarding.UID == "" {
			t.Errorf("event %s: controller %q, regarding %+v", ev.Name, ev.ReportingController, ev.Regarding)
		}
	}
	return evs
}

func hasReason(evs []eventsv1.Event, reason string) bool {
	for _, e := range evs {
		if e.Reason == reason {
			return true
		}
	}
	return false
}

// scrape is one /metrics page in Prometheus' text format.
type scrape []string

// value is the value of the guard's metric name (without its prefix) in
// the first series that carries all of labels.
// series is one metric's wanted value.
type series struct {
	name   string
	labels map[string]string
	want   float64
}

// expect fails the test for each of want that s lacks or has another value of.
func (s scrape) expect(t *testing.T, when string, want []series) {
	t.Helper()
	for _, c := range want {
		if v, ok := s.value(c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s: %s%v = %v (present %v), want %v", when, c.name, c.labels, v, ok, c.want)
		}
	}
}

func (s scrape) value(name string, labels map[string]string) (float64, bool) {
	name = "longhorn_engines_guard_" + name
	for _, line := range s {
		series, val, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		n, ls, _ := strings.Cut(series, "{")
		if n != name {
			continue
		}
		all := true
		for k, v := range labels {
			all = all && strings.Contains(ls, k+"="+strconv.Quote(v))
		}
		if all {
			f, err := strconv.ParseFloat(val, 64)
			return f, err == nil
		}
	}
	return 0, false
}

func (s scrape) has(name string, labels map[string]string) bool {
	_, ok := s.value(name, labels)
	return ok
}

// scrapeUntil scrapes http://addr/metrics until cond holds.
func scrapeUntil(t *testing.T, ctx context.Context, addr, what string, cond func(scrape) bool) scrape {
	t.Helper()
	var last scrape
	poll(t, ctx, "a scrape showing "+what, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /metrics: %d %v", resp.StatusCode, err)
		}
		last = strings.Split(string(b), "\n")
		return cond(last)
	})
	return last
}

// poll evaluates cond every 100ms until it holds, for up to simWait.
func poll(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, simWait, true, func(context.Context) (bool, error) { return cond(), nil })
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
