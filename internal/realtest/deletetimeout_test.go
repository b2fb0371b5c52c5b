package realtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// noReplicaLine is what Longhorn's volume controller logs at every sync of
// a volume whose engine has no replica of its own left to start with.
const noReplicaLine = "no healthy or scheduled replica for starting"

// TestConfirmDeleteTimeout: a confirm whose delete of the old engine lands
// while the controller's own request times out (no answer at all), found
// by the soak. On an affected release (1.4.x) the controller returns the
// error before it switches the replicas to the new engine, and at its next
// sync the old engine is gone, so it never does: the migration clones are
// cleaned up, the new engine is left with no replica of its own and the
// active replicas name the deleted engine (DanglingReplicas, as the KB's
// delete by hand leaves it). scan says so; the guard, once the state has
// settled, repoints the replicas with fix's pipeline (a backup first) and
// Longhorn converges with no active replica deleted and nothing wiped; fix
// by hand then finds nothing to do. On a fixed release Longhorn converges
// by itself.
func TestConfirmDeleteTimeout(t *testing.T) {
	t.Parallel()
	onEachRelease(t, nil, func(t *testing.T, e *env, rel string) {
		vol := "vol-delete-timeout"
		e.attached(vol)
		old, _ := e.migrating(vol)
		if _, err := e.lh.InjectFault(lhreal.Fault{Verb: "delete", Resource: "engines", Name: old, Mode: "timeout"}); err != nil {
			t.Fatal(err)
		}
		e.detach(vol, nodeA) // the confirm
		if !affectedRelease(rel) {
			e.waitFor("converged on node-b", vol, settled(nodeB))
			e.assertNoDamage(vol)
			return
		}
		if err := e.lh.WaitLog(e.ctx, noReplicaLine); err != nil {
			t.Fatal(err)
		}
		e.scanUntil(vol+" is "+string(detect.TypeDanglingReplicas), vol, func(out, _ string, code int) bool {
			return code == 1 && strings.Contains(out, string(detect.TypeDanglingReplicas))
		})
		backups := t.TempDir()
		g := e.startGuard("--yes", "--settle", "1s", "--backup-dir", backups)
		e.await("the guard repaired "+vol, func() bool { return g.stdout.count(vol, "repaired") > 0 })
		e.waitFor("converged on node-b", vol, settled(nodeB))
		if code := g.stop(e); code != 0 {
			t.Errorf("the guard exited %d, want 0\n--- stderr\n%s", code, g.stderr.String())
		}
		if w := e.writtenByPlugin(vol); len(w) == 0 {
			t.Errorf("the guard reported a repair of %s but wrote nothing", vol)
		}
		top, _ := filepath.Glob(filepath.Join(backups, vol+"*.yaml"))
		nested, _ := filepath.Glob(filepath.Join(backups, "*", vol+"*.yaml"))
		if len(top)+len(nested) == 0 {
			t.Errorf("the guard repaired %s without a backup in %s", vol, backups)
		}
		out, errOut, code := e.plugin("fix", vol, "--yes", "--backup-dir", t.TempDir())
		if code != 0 || strings.Contains(out, "repaired") {
			t.Errorf("fix after the guard: exit %d, want 0 with nothing to do\n--- stdout\n%s--- stderr\n%s", code, out, errOut)
		}
		e.waitFor("converged on node-b", vol, settled(nodeB))
		e.assertNoDamage(vol)
	})
}
