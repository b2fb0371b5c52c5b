package realtest

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// staleCMNRepairProven: the releases served here where fix clears a stale
// status.currentMigrationNodeID (detect's staleCMNProven): the affected
// releases whose own controller keeps the field. 1.4.3 has no such field and
// 1.10.0 clears it itself (TestFamilyStaleMigrationNodeID).
func staleCMNRepairProven(rel string) bool {
	v := longhorn.MustParseVersion(rel)
	return v.Major == 1 && v.Minor == 5 && v.Patch == 3
}

// TestFamilyStaleMigrationNodeIDRepair: on Longhorn 1.5.3's own
// controllers, scan proposes clearing the stale field, fix VOL --yes clears
// it (exit 0, one patch of the volume's status), a second fix has nothing to
// do, and Longhorn then attaches the volume to node-b, and after a detach
// attaches it to node-a and migrates it to node-b, with no active replica
// deleted and no directory wiped. Before this repair scan proposed no
// action (fix refused, exit 1) and the test stops at scan's proposal.
func TestFamilyStaleMigrationNodeIDRepair(t *testing.T) {
	t.Parallel()
	const vol = "vol-cmn-fix"
	staleCMNProposed(t, vol, func(t *testing.T, e *env) {
		out, errOut, code := e.plugin("fix", vol, "--yes", "--backup-dir", t.TempDir())
		if code != 0 || !strings.Contains(out, `volume.longhorn.io "`+vol+`" patched`+"\n") || !strings.Contains(out, `volume.longhorn.io "`+vol+`" repaired`) {
			t.Fatalf("fix: exit %d, want 0 with the patch and the verification\n--- stdout\n%s--- stderr\n%s", code, out, errOut)
		}
		if v, _, _ := e.state(vol); v.Status.CurrentMigrationNodeID != "" {
			t.Fatalf("fix exited 0 with status.currentMigrationNodeID %q", v.Status.CurrentMigrationNodeID)
		}
		out, errOut, code = e.plugin("fix", vol, "--yes", "--backup-dir", t.TempDir())
		if code != 0 || strings.Contains(out, "patched") || !strings.Contains(errOut, "Nothing to change.") {
			t.Errorf("fix again: exit %d, want 0 and nothing to change\n--- stdout\n%s--- stderr\n%s", code, out, errOut)
		}
		e.attachesAfterRepair(vol)
	})
}

// TestFamilyStaleMigrationNodeIDLostAnswer: the repair's one write reaches
// Longhorn 1.5.3's API server but its answer is lost (the connection is
// reset after forwarding). fix does not resend it: it reads the volume back,
// says the write landed, verifies and exits 0; Longhorn then converges as
// after an uninterrupted repair.
func TestFamilyStaleMigrationNodeIDLostAnswer(t *testing.T) {
	t.Parallel()
	const vol = "vol-cmn-lost"
	staleCMNProposed(t, vol, func(t *testing.T, e *env) {
		p, kc := faultproxy.ForTest(t, e.c.RESTConfig())
		p.Add(faultproxy.Rule{Verb: "patch", Resource: longhorn.Volumes.Plural, Name: vol, Fault: faultproxy.ResetAfter, First: 1})
		dir := filepath.Join(t.TempDir(), "backup")
		out, errOut, code := e.pluginVia(kc, "fix", vol, "--yes", "--backup-dir", dir)
		if code != 0 || !strings.Contains(errOut, "the answer to the patch of volume "+vol+" was lost") ||
			!strings.Contains(errOut, `read back: status.currentMigrationNodeID=""`) || !strings.Contains(out, `volume.longhorn.io "`+vol+`" repaired`) {
			t.Fatalf("fix with the answer lost: exit %d, want 0, the read-back and the verification\n--- stdout\n%s--- stderr\n%s", code, out, errOut)
		}
		if n := p.Count("patch", longhorn.Volumes.Plural, vol); n != 1 {
			t.Errorf("%d patches of the volume reached the server, want 1 (never resent)", n)
		}
		if v, _, _ := e.state(vol); v.Status.CurrentMigrationNodeID != "" {
			t.Fatalf("status.currentMigrationNodeID %q after the read-back said applied", v.Status.CurrentMigrationNodeID)
		}
		e.attachesAfterRepair(vol)
	})
}

// staleCMNProposed runs body, in parallel per release where the repair is
// proven, once vol is left with a stale status.currentMigrationNodeID and
// scan proposes fix's repair of it.
func staleCMNProposed(t *testing.T, vol string, body func(t *testing.T, e *env)) {
	t.Helper()
	onEachRelease(t, staleCMNRepairProven, func(t *testing.T, e *env, _ string) {
		e.staleMigrationNodeID(vol)
		e.repairProposed(vol)
		body(t, e)
	})
}

// repairProposed waits until scan reports vol's stale field with fix's
// action, and counts it repairable.
func (e *env) repairProposed(vol string) {
	e.t.Helper()
	e.scanUntil("scan proposes clearing the field", vol, func(out, _ string, code int) bool {
		return code == 1 && strings.Contains(out, `"type": "StaleMigrationNodeID"`) && strings.Contains(out, `"action": "clear-migration-node"`)
	}, "-o", "json")
	if _, errOut, code := e.plugin("scan", vol); code != 1 || !strings.Contains(errOut, "1 repairable by fix") {
		e.t.Errorf("scan: exit %d, want 1 with the volume repairable by fix\n%s", code, errOut)
	}
}

// attachesAfterRepair: Longhorn attaches the repaired volume to node-b;
// once detached again, to node-a, and migrates it to node-b on a second
// ticket, confirmed by removing node-a's; nothing is lost.
func (e *env) attachesAfterRepair(vol string) {
	e.t.Helper()
	if err := e.sim.Attach(e.ctx, vol, nodeB); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor("attached to node-b after the repair", vol, settled(nodeB))
	e.detach(vol, nodeB)
	e.waitFor("detached from node-b", vol, detached)
	if err := e.sim.Attach(e.ctx, vol, nodeA); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor("attached to node-a", vol, settled(nodeA))
	e.migrating(vol)
	e.detach(vol, nodeA)
	e.waitFor("migrated to node-b", vol, settled(nodeB))
	e.assertNoDamage(vol)
	if out, errOut, code := e.plugin("scan", vol); code != 0 {
		e.t.Errorf("scan after the migration: exit %d\n%s%s", code, out, errOut)
	}
}

// TestFamilyStaleMigrationNodeIDAttachWithoutRepair pins what Longhorn
// 1.5.3's own controllers do when, instead of the repair, an attach request
// comes for a volume left with the stale field: they attach it to node-a
// (not to the stale node-b) and clear the field on that attach. The stale
// field blocks nothing here while the volume stays detached; the detaching
// loop of longhorn#11479 was not reproduced in this harness
// (docs/testing.md).
func TestFamilyStaleMigrationNodeIDAttachWithoutRepair(t *testing.T) {
	t.Parallel()
	const vol = "vol-cmn-attach"
	staleCMNProposed(t, vol, func(t *testing.T, e *env) {
		if err := e.sim.Attach(e.ctx, vol, nodeA); err != nil {
			t.Fatal(err)
		}
		e.waitFor("attached to node-a with the field cleared", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return settled(nodeA)(v, es, rs) && v.Status.CurrentMigrationNodeID == ""
		})
		e.assertNoDamage(vol)
	})
}
