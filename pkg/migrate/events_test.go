package migrate_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/kubeserver"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// TestFixRecordsEvents: migrate --fix records the repair and its
// verification as Events on the Longhorn Volume, as fix does, on
// Kubernetes' own API server (the CRD server of the other tests has no
// events API); --events=false records none.
func TestFixRecordsEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	full := kubeserver.ForTest(ctx, t)
	ns := kubeserver.Namespace
	e := &env{testenv.StartSim(t, full.RESTConfig(), ns, "v1.4.3", 3*time.Minute, waitTimeout)}
	reasons := func(vol string) map[string]bool {
		l, err := full.Client().EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("regarding.name", vol).String()})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, ev := range l.Items {
			if ev.ReportingController == volevents.Controller && ev.Regarding.Kind == "Volume" {
				out[ev.Reason] = true
			}
		}
		return out
	}
	for _, tc := range []struct {
		vol    string
		events bool
	}{{"vol-events", true}, {"vol-quiet", false}} {
		e.createAttached(lhsim.VolumeOptions{Migratable: true}, tc.vol)
		e.Sim.Inject(lhsim.Fault{Kind: lhsim.FailEngineDelete, Volume: tc.vol, Engine: lhsim.RoleOld, Times: 1})
		args := []string{"migrate", tc.vol, "--to", nodeB, "--confirm", "--fix", "--backup-dir", t.TempDir(), "--yes", poll, "-n", ns}
		if !tc.events {
			args = append(args, "--events=false")
		}
		res := clitest.New(t, full.KubeconfigPath()).Run(ctx, args...)
		expectCode(t, res, 0)
		expectContains(t, "stderr", res.Stderr, "Repaired by fix:", "Verified:")
		if !tc.events {
			if got := reasons(tc.vol); len(got) > 0 {
				t.Errorf("--events=false recorded %v", got)
			}
			continue
		}
		var got map[string]bool
		// the recorder flushes before the command ends; poll for the API's list
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			got = reasons(tc.vol)
			return got[fix.ReasonRepairApplied] && got[fix.ReasonRepairVerified], nil
		}); err != nil {
			t.Errorf("Events on volume %s: %v, want %s and %s", tc.vol, got, fix.ReasonRepairApplied, fix.ReasonRepairVerified)
		}
	}
}
