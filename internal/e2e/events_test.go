package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// volumeEvents lists the Events regarding the Longhorn Volume vol through
// the events.k8s.io API.
func volumeEvents(ctx context.Context, t *testing.T, vol string) []eventsv1.Event {
	t.Helper()
	l, err := cluster.Client().EventsV1().Events(cluster.Namespace()).List(ctx,
		metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("regarding.name", vol).String()})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// awaitEvents polls until vol has an Event of each reason, and returns them.
func awaitEvents(ctx context.Context, t *testing.T, vol string, reasons ...string) []eventsv1.Event {
	t.Helper()
	var evs []eventsv1.Event
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		evs = volumeEvents(ctx, t, vol)
		for _, r := range reasons {
			if !slices.ContainsFunc(evs, func(e eventsv1.Event) bool { return e.Reason == r }) {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		t.Fatalf("Events of %s: want %v, have %v", vol, reasons, evs)
	}
	return evs
}

// withoutEvents is rules without the rule on events.k8s.io.
func withoutEvents(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	return slices.DeleteFunc(slices.Clone(rules), func(r rbacv1.PolicyRule) bool { return slices.Contains(r.APIGroups, "events.k8s.io") })
}

// One-shot fix, run through kubectl as a user holding exactly the fix Role
// of docs/rbac.md, records its Events on the Longhorn Volumes (#31): the
// repair (RepairApplied) and its verification (here RepairNotVerified: no
// Longhorn controller runs, so the volume never converges) on the volume
// it repaired, and RepairRefused, with the reason, on the volume it
// refused. kubectl describe and the plugin's describe show them. Without
// the Events rule the user gets one warning and the repair goes on;
// --events=false records none and needs no permission.
func TestFixRecordsEventsWithTheDocumentedRole(t *testing.T) {
	fixRole := documentedRoles(t)["longhorn-engines-fix"]
	if !slices.ContainsFunc(fixRole, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.APIGroups, "events.k8s.io") }) {
		t.Fatalf("docs/rbac.md's fix Role has no rule on events.k8s.io: %+v", fixRole)
	}
	ctx := begin(t)
	const repaired, refused = "pvc-ev-repaired", "pvc-ev-refused"
	create(ctx, t, testenv.TwoActiveEngines(stuckVersion, repaired), testenv.Issue4827(stuckVersion, refused))
	stale := testenv.EngineName(stuckVersion, repaired, 0)

	r := kubectlAs(ctx, t, userWith(t, fixRole), "longhorn-engines", "fix", repaired, refused, "--yes", "--backup-dir", t.TempDir(), "--timeout", "2s")
	if r.Code != cmdutil.ExitNeedsAction || !strings.Contains(r.Stdout, `engine.longhorn.io "`+stale+`" deactivated`) ||
		!strings.Contains(r.Stdout, refused) || strings.Contains(r.Stderr, "no Kubernetes Events") {
		t.Fatalf("fix with the documented fix Role: want exit %d, %s deactivated, %s refused, no warning about Events:\n%v", cmdutil.ExitNeedsAction, stale, refused, r)
	}
	for vol, reasons := range map[string][]string{
		repaired: {fix.ReasonRepairApplied, fix.ReasonRepairNotVerified},
		refused:  {fix.ReasonRepairRefused},
	} {
		for _, ev := range awaitEvents(ctx, t, vol, reasons...) {
			if ev.ReportingController != volevents.Controller || ev.Regarding.APIVersion != "longhorn.io/v1beta2" || ev.Regarding.Kind != "Volume" || ev.Regarding.UID == "" {
				t.Errorf("Event %s of %s: controller %q, regarding %+v", ev.Reason, vol, ev.ReportingController, ev.Regarding)
			}
			switch ev.Reason {
			case fix.ReasonRepairApplied:
				if ev.Type != "Normal" || ev.Action != "DeactivateEngine" || !strings.Contains(ev.Note, stale) {
					t.Errorf("RepairApplied: type %s, action %s, note %q; want Normal, DeactivateEngine, naming %s", ev.Type, ev.Action, ev.Note, stale)
				}
			case fix.ReasonRepairNotVerified, fix.ReasonRepairRefused:
				if ev.Type != "Warning" || ev.Note == "" {
					t.Errorf("%s: type %s, note %q; want a Warning that says why", ev.Reason, ev.Type, ev.Note)
				}
			}
		}
	}
	d := kubectl(ctx, t, "describe", "volumes.longhorn.io", refused, "-n", cluster.Namespace())
	if d.Code != 0 || !strings.Contains(d.Stdout, fix.ReasonRepairRefused) || !strings.Contains(d.Stdout, volevents.Controller) {
		t.Errorf("kubectl describe volumes.longhorn.io %s: want the RepairRefused Event from %s:\n%v", refused, volevents.Controller, d)
	}
	d = kubectl(ctx, t, "longhorn-engines", "describe", refused)
	if !strings.Contains(d.Stdout, "Events:") || !strings.Contains(d.Stdout, fix.ReasonRepairRefused) {
		t.Errorf("kubectl longhorn-engines describe %s: want its Events section with RepairRefused:\n%v", refused, d)
	}

	t.Run("without the Events rule", func(t *testing.T) {
		ctx := begin(t)
		const vol = "pvc-ev-no-permission"
		create(ctx, t, testenv.TwoActiveEngines(stuckVersion, vol))
		stale := testenv.EngineName(stuckVersion, vol, 0)
		r := kubectlAs(ctx, t, userWith(t, withoutEvents(fixRole)), "longhorn-engines", "fix", vol, "--yes", "--backup-dir", t.TempDir(), "--timeout", "2s")
		if n := strings.Count(r.Stderr, "warning: no Kubernetes Events will be recorded"); n != 1 ||
			!strings.Contains(r.Stderr, `cannot create events.events.k8s.io in namespace "`+cluster.Namespace()+`"`) {
			t.Errorf("want exactly one warning naming the missing permission, have %d:\n%v", n, r)
		}
		if !strings.Contains(r.Stdout, `engine.longhorn.io "`+stale+`" deactivated`) || engineActive(ctx, t, stale) {
			t.Errorf("the repair did not go on without Events:\n%v", r)
		}
		if evs := volumeEvents(ctx, t, vol); len(evs) != 0 {
			t.Errorf("Events recorded without the permission: %v", evs)
		}
	})

	t.Run("--events=false", func(t *testing.T) {
		ctx := begin(t)
		const vol = "pvc-ev-off"
		create(ctx, t, testenv.TwoActiveEngines(stuckVersion, vol))
		stale := testenv.EngineName(stuckVersion, vol, 0)
		r := kubectlAs(ctx, t, userWith(t, withoutEvents(fixRole)), "longhorn-engines", "fix", vol, "--yes", "--events=false",
			"--backup-dir", filepath.Join(t.TempDir(), "backup"), "--timeout", "2s")
		if strings.Contains(r.Stderr, "no Kubernetes Events") || !strings.Contains(r.Stdout, `engine.longhorn.io "`+stale+`" deactivated`) {
			t.Errorf("--events=false: want the repair and no word about Events:\n%v", r)
		}
		if evs := volumeEvents(ctx, t, vol); len(evs) != 0 {
			t.Errorf("--events=false recorded %v", evs)
		}
	})
}
