package realtest

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// staleMigrationNodeID builds the state of longhorn#11479 on Longhorn's own
// controllers: vol attached to node-a, detached by the VolumeAttachment and
// volume controllers, then status.currentMigrationNodeID=node-b written on
// the status subresource while they are paused.
func (e *env) staleMigrationNodeID(vol string) {
	e.t.Helper()
	e.attached(vol)
	e.detach(vol, nodeA)
	e.waitFor("detached", vol, detached)
	e.patchPaused(longhorn.Volumes, vol, `{"status":{"currentMigrationNodeID":"`+nodeB+`"}}`, "status")
}

func detached(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
	return v.Status.State == longhorn.VolumeStateDetached && v.Spec.NodeID == "" && v.Status.CurrentNodeID == ""
}

// TestFamilyStaleMigrationNodeID: a detached volume left with
// status.currentMigrationNodeID (longhorn#11479, #12238). Longhorn 1.5.3's
// own controller keeps the field (processMigration returns without
// spec.nodeID) and scan reports StaleMigrationNodeID on an affected release
// with the KB's status patch; 1.10.0's controller clears it itself and scan
// then reports nothing.
func TestFamilyStaleMigrationNodeID(t *testing.T) {
	t.Parallel()
	onEachRelease(t, func(rel string) bool { return longhorn.MustParseVersion(rel).HasCurrentMigrationNodeID() }, func(t *testing.T, e *env, rel string) {
		vol := "vol-stale-cmn"
		e.staleMigrationNodeID(vol)
		if longhorn.MustParseVersion(rel).AtLeast(1, 9, 2) {
			e.waitFor("Longhorn "+rel+" clears the stale field itself", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
				return v.Status.CurrentMigrationNodeID == ""
			})
			if out, errOut, code := e.plugin("scan", vol); code != 0 {
				t.Errorf("scan after Longhorn %s cleared the field: exit %d\n%s%s", rel, code, out, errOut)
			}
			return
		}
		var last string
		e.await("scan reports StaleMigrationNodeID", func() bool {
			out, errOut, code := e.plugin("scan", vol, "-o", "json")
			last = out + errOut
			return code == 1 && strings.Contains(out, `"type": "StaleMigrationNodeID"`) && strings.Contains(out, `"affectedRelease": true`) &&
				strings.Contains(out, `--subresource=status`)
		})
		v, _, _ := e.state(vol)
		if v.Status.CurrentMigrationNodeID != nodeB {
			t.Errorf("Longhorn %s changed status.currentMigrationNodeID to %q; the issue says it keeps it\nlast scan: %s", rel, v.Status.CurrentMigrationNodeID, last)
		}
		out, errOut, code := e.plugin("describe", vol)
		if code != 1 || !strings.Contains(out, "longhorn/longhorn#11479") || !strings.Contains(out, `"currentMigrationNodeID":""`) {
			t.Errorf("describe: exit %d, want 1 with the issue and the KB's patch\n%s%s", code, out, errOut)
		}
	})
}
