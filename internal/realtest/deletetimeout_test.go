package realtest

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
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
// delete by hand leaves it). scan says so; the guard reports it, writes
// nothing (it repairs two active engines only) and ends with exit 1 naming
// it; fix repoints the replicas, and Longhorn converges with no active
// replica deleted and nothing wiped. On a fixed release Longhorn converges
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
		g := e.startGuard("--yes", "--settle", "1s", "--backup-dir", t.TempDir())
		e.await("the guard reports "+vol, func() bool {
			return strings.Contains(g.stdout.String(), `"`+vol+`" `+string(detect.TypeDanglingReplicas))
		})
		if code := g.stop(e); code != fix.ExitNotDone || !strings.Contains(g.stderr.String(), `needs attention: volume.longhorn.io "`+vol+`": `+string(detect.TypeDanglingReplicas)) {
			t.Errorf("the guard exited %d, want %d with %s left %s\n--- stderr\n%s", code, fix.ExitNotDone, vol, detect.TypeDanglingReplicas, g.stderr.String())
		}
		if w := e.writtenByPlugin(vol); len(w) > 0 {
			t.Errorf("the guard wrote %v", w)
		}
		out, errOut, code := e.plugin("fix", vol, "--yes", "--backup-dir", t.TempDir())
		if code != 0 {
			t.Fatalf("fix exited %d\n--- stdout\n%s--- stderr\n%s", code, out, errOut)
		}
		e.waitFor("converged on node-b", vol, settled(nodeB))
		e.assertNoDamage(vol)
	})
}
