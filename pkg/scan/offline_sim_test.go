package scan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

// TestScanBundleFromSimulator: the simulated Longhorn controllers produce
// every scenario (the #6642 state from an injected delete failure during
// confirm); the test then writes a support bundle of the namespace the way
// support-bundle-kit does (Lists with the "null" rewriting, the manager's log
// with kubelet timestamps), as a zip and as a folder, and the same objects as
// `kubectl get -o yaml` output. Offline scans must reach the live scan's
// verdicts and add the log evidence.
func TestScanBundleFromSimulator(t *testing.T) {
	for _, tc := range simGenerations {
		t.Run(tc.version, func(t *testing.T) {
			ctx, sim := reachScenarios(t, tc.version)
			ns := sim.Namespace()
			const stuck = "two-active-engines"
			bugLines := countLines(sim.Logs(stuck), "found the second active engine")
			if bugLines == 0 {
				t.Fatalf("the simulator logged no BUG line for %s", stuck)
			}

			live := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "scan", "-o", "json")
			if live.Code != 1 {
				t.Fatalf("live scan:\n%s", live)
			}
			want := verdicts(offReport(t, live))

			objs, err := testenv.JSONObjectsFrom(ctx, cluster.Dynamic(), ns)
			if err != nil {
				t.Fatal(err)
			}
			b := &testenv.Bundle{
				CreatedAt: time.Now().UTC().Truncate(time.Second),
				Objects:   objs,
				Logs:      managerLogs(ns, sim),
			}
			dir := t.TempDir()
			zipPath, folder := b.WriteZipAndDir(t, dir)
			dump := filepath.Join(dir, "dump.yaml")
			if err := os.WriteFile(dump, testenv.KubectlYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": offAny(objs)}), 0o644); err != nil {
				t.Fatal(err)
			}

			for _, args := range [][]string{{"--bundle", zipPath}, {"--bundle", folder}, {"-f", dump}} {
				r := offRun(t, append([]string{"scan", "-o", "json"}, args...)...)
				if r.Code != 1 || r.Stderr != "" {
					t.Fatalf("scan %v:\n%s", args, r)
				}
				rep := offReport(t, r)
				if got := verdicts(rep); got != want {
					t.Errorf("scan %v verdicts differ from the live scan:\n%s\nlive:\n%s", args, got, want)
				}
				f := offFinding(rep, stuck)
				if f == nil || f.Action != tc.action {
					t.Fatalf("scan %v: %s finding %+v", args, stuck, f)
				}
				if args[0] == "-f" {
					if f.Evidence.Logs != nil {
						t.Errorf("files carry no logs, got %+v", f.Evidence.Logs)
					}
					continue
				}
				ev := f.Evidence.Logs
				if ev == nil || ev.Count != bugLines || !strings.HasPrefix(ev.Message, "BUG: found the second active engine ") ||
					!strings.Contains(ev.Message, f.Keep) || !strings.Contains(ev.Message, f.Stale[0]) || ev.FirstSeen.IsZero() || ev.LastSeen.Before(ev.FirstSeen) {
					t.Errorf("scan %v: log evidence %+v, want %d BUG lines naming %s and %s", args, ev, bugLines, f.Keep, f.Stale)
				}
			}

			// Repair as the plugin would (deactivate on 1.4, delete on
			// 1.5.0/1.5.1), let Longhorn converge, and take a new bundle:
			// the objects are healthy, the old BUG lines are still in the
			// log, so the volume is reported from its logs alone.
			f := offFinding(offReport(t, live), stuck)
			repair(ctx, t, ns, tc.action, f.Stale[0])
			if err := sim.WaitFor(ctx, stuck, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
				return len(es) == 1 && es[0].Name == f.Keep && es[0].Spec.Active && v.Status.CurrentNodeID == testenv.NodeB && len(rs) > 0 && allActive(rs)
			}); err != nil {
				t.Fatalf("no convergence after the repair: %v", err)
			}
			if objs, err = testenv.JSONObjectsFrom(ctx, cluster.Dynamic(), ns); err != nil {
				t.Fatal(err)
			}
			b.Objects, b.Logs, b.CreatedAt = objs, managerLogs(ns, sim), time.Now().UTC().Truncate(time.Second)
			zipPath = b.ZipPath(t, t.TempDir())
			r := offRun(t, "scan", "--bundle", zipPath, "-o", "json", stuck)
			rep := offReport(t, r)
			f = offFinding(rep, stuck)
			if r.Code != 1 || f == nil || f.Type != detect.TypeSyncErrorInLogs || f.Severity != detect.SeverityWarning ||
				f.Evidence.Logs == nil || f.Evidence.Logs.Count < bugLines || len(f.Evidence.Engines) != 1 {
				t.Errorf("after the repair: %s", r)
			}
		})
	}
}

// managerLogs puts the simulator's log into the bundle as the manager's
// container log: the kubelet's timestamp, then the logrus line. The
// simulator plays every manager, so one pod holds every line, as the owner
// node's manager would for the failing volume.
func managerLogs(ns string, sim *lhsim.Sim) map[string]string {
	var b strings.Builder
	now := time.Now().UTC()
	for _, l := range sim.Logs("") {
		b.WriteString(testenv.KubeletPrefix(now, l) + "\n")
	}
	return map[string]string{ns + "/longhorn-manager-sim01/longhorn-manager.log": b.String()}
}

func countLines(lines []string, needle string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, needle) {
			n++
		}
	}
	return n
}

// verdicts is what must not depend on where the objects came from.
func verdicts(rep scan.Report) string {
	var out []string
	for _, f := range rep.Findings {
		out = append(out, fmt.Sprintf("%s %s %s %s keep=%s stale=%v", f.Volume, f.Type, f.Severity, f.Action, f.Keep, f.Stale))
	}
	sort.Strings(out)
	return fmt.Sprintf("%s %s volumes=%d healthy=%d\n%s", rep.LonghornVersion, rep.Namespace, rep.Summary.Volumes, rep.Summary.Healthy, strings.Join(out, "\n"))
}

func repair(ctx context.Context, t *testing.T, ns string, action detect.Action, engine string) {
	t.Helper()
	engines := cluster.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(ns)
	var err error
	switch action {
	case detect.ActionDeactivate:
		patch, _ := json.Marshal([]map[string]any{{"op": "replace", "path": "/spec/active", "value": false}})
		_, err = engines.Patch(ctx, engine, types.JSONPatchType, patch, metav1.PatchOptions{})
	case detect.ActionDelete:
		err = engines.Delete(ctx, engine, metav1.DeleteOptions{})
	default:
		t.Fatalf("no repair for action %s", action)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func allActive(rs []longhorn.Replica) bool {
	for _, r := range rs {
		if !r.Spec.Active {
			return false
		}
	}
	return true
}
