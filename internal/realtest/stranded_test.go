package realtest

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// confirmWithoutEngine drives vol into a confirm that landed while
// Longhorn had the migration engine stopped and off its node for a restart
// (what it does when the running migration replicas stop matching the
// engine's replica map, e.g. a replica's node went down): the migration
// ready, then, with the controllers paused, the migration engine parked as
// Longhorn parks it and the confirm written. It returns the migration
// engine.
func (e *env) confirmWithoutEngine(vol string) string {
	e.t.Helper()
	e.attached(vol)
	_, mig := e.migrating(vol)
	e.pausedWhile(func() {
		e.patch(longhorn.Engines, mig, parkEngine)
		if longhorn.MustParseVersion(e.release).HasVolumeAttachments() {
			e.detach(vol, nodeA)
		} else {
			e.patch(longhorn.Volumes, vol, `{"spec":{"nodeID":"`+nodeB+`","migrationNodeID":""}}`)
		}
	})
	return mig
}

// parkEngine stops an engine off its node as Longhorn does to restart a
// migration engine whose replicas changed.
const parkEngine = `{"spec":{"nodeID":"","desireState":"stopped","replicaAddressMap":null}}`

// patch merge-patches one object of the test's namespace (its subresource
// sub).
func (e *env) patch(r longhorn.Resource, name, patch string, sub ...string) {
	e.t.Helper()
	if _, err := e.c.Dynamic().Resource(r.GVR()).Namespace(e.ns).Patch(e.ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, sub...); err != nil {
		e.t.Fatal(err)
	}
}

// TestConfirmWithoutEngineOnLonghorn: on 1.4.3 Longhorn never finishes
// such a confirm (its confirm branch looks for an engine on spec.nodeID at
// every sync and finds none); scan reports ConfirmWithoutEngine and exits
// 1, and the step it prints, run as an operator would paste it, places the
// migration engine: Longhorn finishes the confirm with nothing lost. On
// 1.5.3 status.currentMigrationNodeID keeps the migration going, Longhorn
// places the engine itself, and scan never reports the state.
func TestConfirmWithoutEngineOnLonghorn(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		vol := "vol-no-engine"
		mig := e.confirmWithoutEngine(vol)
		if longhorn.MustParseVersion(rel).HasCurrentMigrationNodeID() {
			e.waitFor("Longhorn "+rel+" finishes the confirm itself", vol, settled(nodeB))
			e.assertNoDamage(vol)
			if out, errOut, code := e.plugin("scan", vol); code != 0 {
				t.Errorf("scan after Longhorn finished: exit %d\n%s%s", code, out, errOut)
			}
			return
		}
		var report string
		e.scanUntil("scan reports ConfirmWithoutEngine", vol, func(out, _ string, code int) bool {
			report = out
			return code == 1 && strings.Contains(out, `"type": "ConfirmWithoutEngine"`)
		}, "-o", "json")
		if err := e.lh.WaitLog(e.ctx, "cannot find the current engine for the switching"); err != nil {
			t.Fatalf("Longhorn %s did not fail its confirm branch: %v", rel, err)
		}
		v, es, _ := e.state(vol)
		if v.Spec.NodeID != nodeB || len(es) != 2 {
			t.Fatalf("Longhorn %s left the state: spec.nodeID %q, %d engines", rel, v.Spec.NodeID, len(es))
		}
		e.runStep(patchStep(t, report, mig))
		e.waitFor("Longhorn "+rel+" finishes the confirm after the step", vol, settled(nodeB))
		e.assertNoDamage(vol)
		if out, errOut, code := e.plugin("scan", vol); code != 0 {
			t.Errorf("scan after the step: exit %d\n%s%s", code, out, errOut)
		}
	})
}

// runStep runs a step scan printed, as an operator pastes it into a shell.
func (e *env) runStep(step string) {
	e.t.Helper()
	cmd := exec.CommandContext(e.ctx, "bash", "-c", step)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.c.KubeconfigPath())
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("the printed step %q: %v\n%s", step, err, out)
	}
}

// patchStep is the step of a scan -o json report that patches engine.
func patchStep(t *testing.T, report, engine string) string {
	t.Helper()
	var r struct {
		Findings []struct {
			Family *struct {
				Steps []string `json:"steps"`
			} `json:"family"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(report), &r); err != nil {
		t.Fatalf("scan -o json: %v\n%s", err, report)
	}
	for _, f := range r.Findings {
		if f.Family == nil {
			continue
		}
		for _, s := range f.Family.Steps {
			if strings.Contains(s, "patch engines.longhorn.io "+engine) {
				return s
			}
		}
	}
	t.Fatalf("no step patches engine %s:\n%s", engine, report)
	return ""
}
