package realtest

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// setSetting creates (or overwrites) a Longhorn setting in this env.
func (e *env) setSetting(name, value string) {
	e.t.Helper()
	ri := e.c.Dynamic().Resource(longhorn.Settings.GVR()).Namespace(e.ns)
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": longhorn.APIVersion, "kind": longhorn.Settings.Kind,
		"metadata": map[string]any{"name": name, "namespace": e.ns},
		"value":    value,
	}}
	if _, err := ri.Create(e.ctx, u, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// plannedReplicaWrites lists fix's replica writes for vol in order, as
// scan -o json reports them (the plan fix acts on).
func (e *env) plannedReplicaWrites(vol string) []string {
	e.t.Helper()
	out, errOut, code := e.plugin("scan", vol, "-o", "json")
	if code > 1 {
		e.t.Fatalf("scan -o json exited %d\n%s%s", code, out, errOut)
	}
	var rep struct {
		Findings []struct {
			Volume         string `json:"volume"`
			ReplicaChanges []struct {
				Replica string `json:"replica"`
			} `json:"replicaChanges"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		e.t.Fatalf("scan -o json: %v\n%s", err, out)
	}
	var names []string
	for _, f := range rep.Findings {
		if f.Volume == vol {
			for _, c := range f.ReplicaChanges {
				names = append(names, c.Replica)
			}
		}
	}
	if len(names) == 0 {
		e.t.Fatalf("no replica write planned:\n%s", out)
	}
	return names
}

// TestStopAfterEachReplicaWrite (F1), on Longhorn's own controllers: fix
// stopped after each prefix of its replica writes (the next one refused by
// the server), then the stale engine deleted by hand (the KB step), with
// replica auto-balance on where fix acts with it. Longhorn cleans up at
// once; no replica may be deleted while active and no directory the
// survivor uses wiped. On 1.4.3 the old order (every activation first) left
// a directory with two active replicas, of which auto-balance deletes one.
// Then fix run again must leave nothing wiped either.
func TestStopAfterEachReplicaWrite(t *testing.T) {
	t.Parallel()
	for _, rel := range releasesOrSkip(t) {
		v := longhorn.MustParseVersion(rel)
		prefixes := []int{1, 2, 3}
		if !v.Affected() {
			prefixes = []int{1} // 1.5.3+: one directory at a time, activation first
		}
		for _, k := range prefixes {
			t.Run(rel+"/prefix-"+string(rune('0'+k)), func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, rel)
				if v.Affected() {
					// fix acts with auto-balance on before 1.5.3: its order
					// never gives a directory two active replicas
					e.setSetting(longhorn.ReplicaAutoBalanceSetting, "best-effort")
				}
				vol := "vol-prefix"
				old := e.stuck(vol)
				e.waitRepairable(vol)
				writes := e.plannedReplicaWrites(vol)
				if k >= len(writes) {
					t.Skipf("only %d replica writes", len(writes))
				}
				p, kc := faultproxy.ForTest(t, e.c.RESTConfig())
				p.Add(faultproxy.Rule{Verb: "patch", Resource: longhorn.Replicas.Plural, Name: writes[k], Fault: faultproxy.Status409})
				out, errOut, code := e.pluginVia(kc, "fix", vol, "--yes", "--wait=false", "--backup-dir", t.TempDir())
				if code != 1 {
					t.Fatalf("fix exited %d, want 1 (stopped)\n%s%s", code, out, errOut)
				}
				for _, w := range writes[:k] {
					if !strings.Contains(out, `"`+w+`"`) {
						t.Errorf("the stop does not report %s as written:\n%s", w, out)
					}
				}
				if !strings.Contains(out, "not written: replica "+writes[k]) || !strings.Contains(out, "engine "+old+" (still active)") {
					t.Errorf("the stop does not say what was not written:\n%s", out)
				}
				// the KB step
				e.deleteEngine(old)
				e.waitFor("stale engine gone, replicas settled", vol, func(_ *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
					if testenv.EngineNamed(es, old) != nil {
						return false
					}
					for _, r := range rs {
						if r.DeletionTimestamp != nil || !r.Spec.Active {
							return false
						}
					}
					return true
				})
				// Nothing deleted while active, nothing wiped. The survivor may
				// be left with no replica of its own and the rest active for
				// the deleted engine (DanglingReplicas): what the KB delete
				// alone leaves on 1.4.3, with every directory intact.
				if l := e.activeDeleted(); len(l) > 0 {
					t.Errorf("replicas deleted while active: %v", l)
				}
				if w := e.sim.WipedDirs(vol); len(w) > 0 {
					t.Errorf("directories wiped: %v", w)
				}
				if t.Failed() {
					vv, es, rs := e.state(vol)
					t.Logf("after the KB delete:\n%s", lhsim.Describe(vv, es, rs))
					return
				}
				// fix run again completes: the data is served again, nothing
				// lost. Longhorn may still be rebuilding after the clean-up,
				// and fix skips a volume that changes under it: run it again
				// until it acts.
				e.await("fix run again completes", func() bool {
					out, errOut, code = e.plugin("fix", vol, "--yes", "--backup-dir", t.TempDir())
					if code != 0 && !strings.Contains(out, "skipped, nothing written") {
						t.Fatalf("fix run again exited %d\n%s%s", code, out, errOut)
					}
					return code == 0
				})
				e.assertNoDamage(vol)
			})
		}
	}
}

// TestExtraCleanupRefusedFrom153 (F1): from 1.5.3 fix activates a clone
// before it deactivates the original on the same directory, so it refuses
// while replica auto-balance is on, and writes nothing.
func TestExtraCleanupRefusedFrom153(t *testing.T) {
	t.Parallel()
	onEachRelease(t, fixedRelease, func(t *testing.T, e *env, rel string) {
		e.setSetting(longhorn.ReplicaAutoBalanceSetting, "best-effort")
		vol := "vol-balance"
		e.stuck(vol)
		e.await("scan names the refusal", func() bool {
			out, errOut, _ := e.plugin("scan", vol)
			return strings.Contains(out+errOut, "auto-balance is best-effort")
		})
		e.fixRefuses(vol, "replica auto-balance is best-effort")
	})
}

// TestStopThenNothingOrMigration (F1): after a stop in the middle of the
// replica writes, with nothing else done fix run again completes and
// Longhorn converges. With a migration request instead, Longhorn still
// refuses the two active engines and nothing is wiped; the request waits
// on the repair (explorer finding E6): fix run again repairs the volume
// and verifies it running the requested migration, and the migration
// confirmed then settles on the requested node, nothing lost. The confirm
// is migrate's: after migrate.NewestProven the scenario stops before it
// (skipUnprovenConfirm), as every confirming scenario does.
func TestStopThenNothingOrMigration(t *testing.T) {
	t.Parallel()
	for _, rel := range releasesOrSkip(t) {
		for _, next := range []string{"nothing", "migration"} {
			t.Run(rel+"/"+next, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, rel)
				vol := "vol-stop"
				e.stuck(vol)
				e.waitRepairable(vol)
				writes := e.plannedReplicaWrites(vol)
				p, kc := faultproxy.ForTest(t, e.c.RESTConfig())
				p.Add(faultproxy.Rule{Verb: "patch", Resource: longhorn.Replicas.Plural, Name: writes[1], Fault: faultproxy.Status409})
				if out, errOut, code := e.pluginVia(kc, "fix", vol, "--yes", "--wait=false", "--backup-dir", t.TempDir()); code != 1 {
					t.Fatalf("fix exited %d, want 1 (stopped)\n%s%s", code, out, errOut)
				}
				if next == "migration" {
					e.requestMigration(vol)
					e.waitRefused(vol)
					e.assertNoDamage(vol)
					out, errOut, code := e.plugin("fix", vol, "--yes", "--backup-dir", t.TempDir(), "--timeout=2m")
					if code != 0 || !strings.Contains(out+errOut, "runs the migration to "+nodeC) {
						t.Fatalf("fix run again after the migration request exited %d\n%s%s", code, out, errOut)
					}
					e.assertNoDamage(vol)
					skipUnprovenConfirm(t, rel)
					if out, errOut, code := e.plugin("migrate", "confirm", vol, "--yes", "--timeout=2m", poll); code != 0 {
						t.Fatalf("migrate confirm exited %d\n%s%s", code, out, errOut)
					}
					e.waitFor("converged on node-c", vol, settled(nodeC))
					e.assertNoDamage(vol)
					return
				}
				out, errOut, code := e.plugin("fix", vol, "--yes", "--backup-dir", t.TempDir())
				if code != 0 {
					t.Fatalf("fix run again exited %d\n%s%s", code, out, errOut)
				}
				e.waitFor("converged on node-b", vol, settled(nodeB))
				e.assertNoDamage(vol)
			})
		}
	}
}
