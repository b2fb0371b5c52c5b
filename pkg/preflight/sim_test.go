package preflight_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/preflight"
)

// The volumes come from internal/testenv's scenarios, reached through the
// simulated Longhorn controllers of each release (the stuck state from an
// injected delete failure during the confirm, not from written objects).

type env struct{ *testenv.Env }

// start runs a simulator of version in namespace ns, with demo's third
// node for the replicas.
func start(t *testing.T, ns, version string) *env {
	t.Helper()
	e := &env{testenv.StartSim(t, cluster.RESTConfig(), ns, version, 4*time.Minute, 60*time.Second)}
	if err := e.Sim.AddNode(e.Ctx, testenv.NodeC, lhsim.NodeOptions{}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) build(names ...string) {
	e.T.Helper()
	scs, err := testenv.SelectScenarios(names)
	if err != nil {
		e.T.Fatal(err)
	}
	if err := testenv.ReachAll(e.Ctx, &testenv.SimCluster{Sim: e.Sim, Dynamic: cluster.Dynamic()}, scs); err != nil {
		e.T.Fatal(err)
	}
}

// run runs the real command tree in the simulator's namespace.
func (e *env) run(args ...string) clitest.Result {
	return clitest.New(e.T, cluster.KubeconfigPath()).Run(e.Ctx, append([]string{"preflight", "-n", e.NS}, args...)...)
}

func (e *env) report(code int, args ...string) *preflight.Report {
	e.T.Helper()
	res := e.run(append(args, "-o", "json")...)
	if res.Code != code {
		e.T.Fatalf("want exit %d, got:\n%s", code, res)
	}
	return decode(e.T, res.Stdout)
}

func decode(t *testing.T, s string) *preflight.Report {
	t.Helper()
	return testenv.DecodeReport[preflight.Report](t, s, preflight.ReportKind)
}

// setWorkload records a KubeVirt VM's pod in the volume's
// status.kubernetesStatus, as Longhorn's kubernetes-pv controller does.
func (e *env) setWorkload(vol, vm string) {
	e.T.Helper()
	patch := `{"status":{"kubernetesStatus":{"pvName":"` + vol + `","pvcName":"` + vm + `-disk-0","namespace":"default","workloadsStatus":[` +
		`{"podName":"virt-launcher-` + vm + `-x7k2p","podStatus":"Running","workloadName":"` + vm + `","workloadType":"VirtualMachineInstance"}]}}}`
	e.MergePatch(longhorn.Volumes, vol, patch, "status")
}

// placed is a migrating volume and the node it is listed under.
type placed struct {
	preflight.MigratingVolume
	node string
}

func migrating(r *preflight.Report) map[string]placed {
	out := map[string]placed{}
	for _, n := range r.Nodes {
		for _, v := range n.Volumes {
			out[v.Name] = placed{v, n.Node}
		}
	}
	return out
}

func blockers(r *preflight.Report) map[string]preflight.Blocker {
	out := map[string]preflight.Blocker{}
	for _, b := range r.Blockers {
		out[b.Volume] = b
	}
	return out
}

// TestPreflightPerRelease runs preflight on a cluster of each release class,
// first with nothing stuck (exit 0), then with a stuck volume and a
// migration in flight (exit 1), and checks each verdict, the grouping and
// the commands it prints.
func TestPreflightPerRelease(t *testing.T) {
	for _, tc := range []struct {
		version, ns string
		affected    bool
		repair      detect.Action
		guardVerb   string
	}{
		{"v1.4.3", "pf-v143", true, detect.ActionDeactivate, "patch on engines"},
		{"v1.5.1", "pf-v151", true, detect.ActionDelete, "delete on engines"},
		{"v1.6.0", "pf-v160", false, detect.ActionDeactivate, ""}, // a volume stuck before the upgrade
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			e := start(t, tc.ns, tc.version)
			e.build("healthy", "idle-migratable")
			e.setWorkload("idle-migratable", "vm-1")
			if tc.version == "v1.6.0" {
				e.attachV2("v2-disk")
			}

			// Nothing blocks: exit 0, whatever the release.
			var r *preflight.Report
			e.Await("the workload in the report", func() bool {
				r = e.report(0)
				mv, ok := migrating(r)["idle-migratable"]
				return ok && len(mv.Workloads) == 1
			})
			if r.Verdict != preflight.VerdictReady || len(r.Blockers) != 0 {
				t.Fatalf("verdict %s, blockers %+v", r.Verdict, r.Blockers)
			}
			if r.Release.Version != tc.version || r.Release.Affected != tc.affected || r.Release.Repair != tc.repair {
				t.Errorf("release: %+v", r.Release)
			}
			v2 := 0
			if tc.version == "v1.6.0" {
				v2 = 1
				if mv, ok := migrating(r)["v2-disk"]; !ok || mv.DataEngine != "v2" || mv.node != testenv.NodeA {
					t.Errorf("the v2 volume live-migrates too: %+v", mv)
				}
			}
			if r.Summary.Attached != 2+v2 || r.Summary.Migrating != 1+v2 || r.Summary.Exposed == nil || *r.Summary.Exposed != tc.affected {
				t.Errorf("summary: %+v", r.Summary)
			}
			mv := migrating(r)["idle-migratable"]
			w := mv.Workloads[0]
			if mv.node != testenv.NodeA || mv.DataEngine != "v1" || mv.Finding != nil || mv.PVC != "default/vm-1-disk-0" ||
				w.Kind != "VirtualMachineInstance" || w.Name != "vm-1" || w.Pod != "virt-launcher-vm-1-x7k2p" {
				t.Errorf("idle-migratable: %+v", mv)
			}
			if _, ok := migrating(r)["healthy"]; ok {
				t.Errorf("an rwo volume does not live-migrate: %+v", r.Nodes)
			}
			guard := r.Recommendation.GuardCommand
			if tc.affected != (guard == "kubectl longhorn-engines fix --watch --yes --for 6h -n "+tc.ns) ||
				tc.affected != (r.Recommendation.GuardRBAC != "" && strings.Contains(r.Recommendation.GuardRBAC, tc.guardVerb)) {
				t.Errorf("recommendation: %+v", r.Recommendation)
			}

			// A stuck volume (on affected releases) and a migration in flight.
			e.build("mid-migration", "two-active-engines")
			// The instance managers report a deleted engine's process gone
			// a moment after the engine: until then it is an orphan.
			e.Await("instance managers settled", func() bool {
				r = e.report(1, "--to", "v1.6.2")
				for _, b := range r.Blockers {
					if b.Type == detect.TypeOrphanEngineProcess {
						return false
					}
				}
				return true
			})
			b := blockers(r)
			mid := b["mid-migration"]
			if mid.Type != detect.TypeMigrationInFlight || mid.Command != "kubectl longhorn-engines migrate rollback mid-migration -n "+tc.ns ||
				!strings.Contains(mid.Resolve, "migrate confirm mid-migration -n "+tc.ns) || mid.Node != testenv.NodeA {
				t.Errorf("mid-migration: %+v", mid)
			}
			stuck, isStuck := b["two-active-engines"]
			if isStuck != tc.affected {
				t.Fatalf("two-active-engines blocker on %s: %v (%+v)", tc.version, isStuck, r.Blockers)
			}
			if tc.affected {
				if stuck.Type != detect.TypeMultipleActiveEngines || stuck.Command != "kubectl longhorn-engines fix two-active-engines -n "+tc.ns || stuck.Node != testenv.NodeB {
					t.Errorf("two-active-engines: %+v", stuck)
				}
				if f := migrating(r)["two-active-engines"].Finding; f == nil || f.Type != detect.TypeMultipleActiveEngines || f.Action != tc.repair {
					t.Errorf("the stuck volume's finding: %+v", f)
				}
			}
			if r.Summary.Migrating != 3+v2 || r.Verdict != preflight.VerdictAttention {
				t.Errorf("summary %+v, verdict %s", r.Summary, r.Verdict)
			}
			if tc.version == "v1.4.3" {
				res := e.run("--to", "v1.6.2")
				if res.Code != 1 {
					t.Fatalf("table: want exit 1:\n%s", res)
				}
				golden(t, "table-v1.4.3.golden", res.Stdout)
				golden(t, "stderr-v1.4.3.golden", res.Stderr)
				res = e.run("--to", "v1.6.2", "-o", "yaml")
				golden(t, "yaml-v1.4.3.golden", res.Stdout)
			}
			e.offlineAgrees(r)
			tg := r.Target
			if tg == nil || tg.Version != "v1.6.2" || tg.Affected || tg.Fixes != tc.affected || !tg.StuckStayStuck ||
				!strings.Contains(tg.StuckNote, "fix deactivates the stale engine") {
				t.Errorf("target: %+v", tg)
			}
			if wantPath := tc.version == "v1.4.3"; wantPath != (len(tg.Path) == 2 && strings.HasPrefix(tg.Path[0], "v1.5.x: use v1.5.2 or later")) {
				t.Errorf("path: %q", tg.Path)
			}
		})
	}
}

// offlineAgrees writes the namespace as a support bundle (zip, laid out by
// support-bundle-kit's rules) and as `kubectl get -o yaml` output, and
// checks that preflight reaches the live verdict from each.
func (e *env) offlineAgrees(live *preflight.Report) {
	e.T.Helper()
	objs, err := testenv.JSONObjectsFrom(e.Ctx, cluster.Dynamic(), e.NS)
	if err != nil {
		e.T.Fatal(err)
	}
	dir := e.T.TempDir()
	b := &testenv.Bundle{CreatedAt: time.Now().UTC().Truncate(time.Second), Objects: objs}
	zipPath := b.ZipPath(e.T, dir)
	list, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	if err != nil {
		e.T.Fatal(err)
	}
	dump := filepath.Join(dir, "dump.yaml")
	if err := os.WriteFile(dump, list, 0o644); err != nil {
		e.T.Fatal(err)
	}
	for _, args := range [][]string{{"--bundle", zipPath}, {"-f", dump}} {
		res := clitest.New(e.T, "").Run(e.Ctx, append([]string{"preflight", "-o", "json", "--to", "v1.6.2"}, args...)...)
		if res.Code != 1 {
			e.T.Fatalf("preflight %v: want exit 1:\n%s", args, res)
		}
		off := decode(e.T, res.Stdout)
		if !strings.HasPrefix(off.Source, map[string]string{"--bundle": "bundle:", "-f": "files"}[args[0]]) {
			e.T.Errorf("source %q", off.Source)
		}
		off.Source = live.Source
		if got, want := summarise(off), summarise(live); got != want {
			e.T.Errorf("preflight %v differs from the live one:\n%s\nlive:\n%s", args, got, want)
		}
	}
}

// summarise is the part of a report an offline read must reproduce.
func summarise(r *preflight.Report) string {
	r.Summary.Volumes = 0 // both count every volume, but keep the comparison on what matters
	b, _ := json.MarshalIndent(struct {
		V preflight.Verdict
		R preflight.Release
		S preflight.Summary
		N []preflight.NodeVolumes
		B []preflight.Blocker
		C []string
	}{r.Verdict, r.Release, r.Summary, r.Nodes, r.Blockers, r.Recommendation.Steps}, "", "  ")
	return string(b)
}

// An engine process left running after its engine was deleted (injected
// during a confirm) blocks the drain of its node until it is gone.
func TestPreflightOrphanEngineProcess(t *testing.T) {
	t.Parallel()
	e := start(t, "pf-orphan", "v1.5.1")
	e.build("mid-migration")
	e.Sim.Inject(lhsim.Fault{Kind: lhsim.OrphanProcess, Volume: "mid-migration", Engine: lhsim.RoleOld})
	if err := e.Sim.Detach(e.Ctx, "mid-migration", testenv.NodeA); err != nil {
		t.Fatal(err)
	}
	var r *preflight.Report
	e.Await("the orphan process reported", func() bool {
		res := e.run("-o", "json")
		r = decode(t, res.Stdout)
		return res.Code == 1 && len(r.Blockers) == 1 && r.Blockers[0].Type == detect.TypeOrphanEngineProcess
	})
	b := r.Blockers[0]
	if orphans := e.Sim.OrphanProcesses(); len(orphans) != 1 || !strings.Contains(b.Resolve, orphans[0]) ||
		b.Command != "kubectl longhorn-engines scan -o wide -n pf-orphan" || !strings.Contains(b.Resolve, `node "node-a"`) {
		t.Errorf("blocker %+v, simulator orphans %v", b, e.Sim.OrphanProcesses())
	}
}

// attachV2 creates a migratable v2 data engine volume and attaches it to
// node-a.
func (e *env) attachV2(vol string) {
	e.T.Helper()
	if err := e.Sim.CreateVolume(e.Ctx, vol, lhsim.VolumeOptions{Migratable: true, DataEngine: longhorn.DataEngineV2, ReplicaNodes: []string{testenv.NodeA, testenv.NodeC}}); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("detached", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Status.State == longhorn.VolumeStateDetached
	})
	if err := e.Sim.Attach(e.Ctx, vol, testenv.NodeA); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("attached", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Status.State == longhorn.VolumeStateAttached && v.Status.CurrentNodeID == testenv.NodeA
	})
}
