package migrate

import (
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TestConfirmedNeedsAnAttachedVolume: on 1.5+ a volume Longhorn detached
// mid-migration (spec.nodeID empty) has no ticket on node "", which once
// read as "confirmed"; a confirm means the volume is attached to the target.
func TestConfirmedNeedsAnAttachedVolume(t *testing.T) {
	for _, ver := range []string{"v1.5.3", "v1.10.0"} {
		d := driverFor(longhorn.MustParseVersion(ver))
		detached := snapOf(t, testenv.CrashDetached(ver, "vol"))
		if d.confirmed(detached, nodeB) {
			t.Errorf("%s: a detached volume with tickets on both nodes reads as confirmed to %s", ver, nodeB)
		}
		onlyB := snapOf(t, testenv.CrashDetached(ver, "vol"))
		onlyB.va = testenv.NewVA("vol", nodeB)
		if d.confirmed(onlyB, nodeB) {
			t.Errorf("%s: a detached volume with B's ticket only reads as confirmed (Longhorn has not attached it)", ver)
		}
		if d.confirmed(snapOf(t, testenv.MidMigration(ver, "vol")), nodeB) {
			t.Errorf("%s: a migration in flight reads as confirmed", ver)
		}
		if !d.confirmed(snapOf(t, confirmed(ver, "vol")), nodeB) {
			t.Errorf("%s: a finished confirm does not read as confirmed", ver)
		}
	}
}
