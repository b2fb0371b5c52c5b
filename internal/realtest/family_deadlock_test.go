package realtest

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// upgradeDeadlockRelease: the releases longhorn#7833 names (1.4.0–1.4.4,
// 1.5.0–1.5.3, 1.6.0; "Don't automatically upgrade engines while
// migrating" fixed 1.4.5, 1.5.4, 1.6.1 and 1.7.0).
func upgradeDeadlockRelease(rel string) bool {
	return between(rel, "1.4.0", "1.4.4") || between(rel, "1.5.0", "1.5.3") || between(rel, "1.6.0", "1.6.0")
}

// newEngineImage is the engine image the automatic upgrade moves volumes
// to in TestFamilyUpgradeMigrationDeadlock.
const newEngineImage = "longhornio/longhorn-engine:new"

// autoUpgradePicks plays Longhorn's EngineImageController, which does not
// run here: a new default engine image deployed on every node (its
// EngineImage status, with a build of its own as lhsim gives every image,
// so that a live upgrade is allowed), and the automatic engine upgrade's pick of vol, attached and
// healthy (1.4.3 and 1.5.3 getVolumesForEngineImageUpgrading and
// canDoLiveEngineImageUpgrade, which do not look at a migration): its
// spec.engineImage (spec.image from 1.6) set to the new image.
func (e *env) autoUpgradePicks(vol string) {
	e.t.Helper()
	if err := e.sim.DeployEngineImage(e.ctx, newEngineImage); err != nil {
		e.t.Fatal(err)
	}
	e.patch(longhorn.Volumes, vol, `{"spec":{"`+imageField(e.release)+`":"`+newEngineImage+`"}}`)
}

// upgradeDeadlock brings vol into longhorn#7833 and checks that Longhorn
// stays there: vol migrates from node-a to node-b; while the migration is
// ready the automatic engine upgrade picks it (played: the
// EngineImageController does not run), and the drain then confirms the
// migration. Longhorn neither finishes the confirm (processMigration skips
// a volume that upgrades) nor upgrades (upgradeEngineForVolume waits for
// one engine). scan reports UpgradeMigrationDeadlock naming the migration
// engine. It returns the migration engine, the old image and the finding.
func (e *env) upgradeDeadlock(vol string) (mig, oldImage string, f familyFinding) {
	e.t.Helper()
	e.attached(vol)
	_, mig = e.migrating(vol)
	v0, _, _ := e.state(vol)
	oldImage = v0.Status.CurrentImage
	e.autoUpgradePicks(vol)
	e.detach(vol, nodeA) // the drain's confirm
	e.waitFor("confirm written", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Spec.NodeID == nodeB && v.Spec.MigrationNodeID == ""
	})
	// what each release logs at every sync of the volume in this state
	evidence := "Skip the migration processing since the volume is being upgraded"
	if !longhorn.MustParseVersion(e.release).HasVolumeAttachments() {
		evidence = "has already attached to node " + nodeA + ", but asked to attach to node " + nodeB
	}
	e.stays("neither the confirm nor the upgrade finishes", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
		return len(es) == 2 && testenv.EngineNamed(es, mig) != nil && v.Status.CurrentNodeID == nodeA &&
			v.Status.CurrentImage == oldImage && v.WantedImage() == newEngineImage
	}, evidence)
	f = e.familyFinding(vol, "UpgradeMigrationDeadlock")
	if len(f.Stale) != 1 || f.Stale[0] != mig || !strings.Contains(f.Reason, "an engine upgrade is pending") ||
		f.Evidence.NodeID != nodeB || f.Evidence.CurrentNodeID != nodeA {
		e.t.Errorf("scan: stale %v, want the migration engine %s; reason %q; evidence nodeID %q currentNodeID %q, want node-b and node-a",
			f.Stale, mig, f.Reason, f.Evidence.NodeID, f.Evidence.CurrentNodeID)
	}
	e.step(f, "only if the upgrade cannot be rolled back", "delete engines.longhorn.io "+mig)
	e.step(f, "concurrent-automatic-engine-upgrade-per-node-limit")
	return mig, oldImage, f
}

// TestFamilyUpgradeMigrationDeadlockRollback: after longhorn#7833's
// deadlock, scan's first repair step, run as printed, rolls the engine
// upgrade back (the volume's image set back to status.currentImage, which
// Longhorn's upgradeEngineForVolume takes as a rollback): Longhorn finishes
// the drain's confirm on node-b with nothing lost, and scan finds nothing
// left. (The upgrade picked again afterwards is an ordinary live upgrade,
// whose engine side lhsim plays: not asserted here.)
func TestFamilyUpgradeMigrationDeadlockRollback(t *testing.T) {
	t.Parallel()
	onEachRelease(t, upgradeDeadlockRelease, func(t *testing.T, e *env, rel string) {
		const vol = "vol-upgrade-rollback"
		_, oldImage, f := e.upgradeDeadlock(vol)
		e.runStep(e.step(f, "patch volumes.longhorn.io "+vol, `"`+imageField(rel)+`":"`+oldImage+`"`, "roll the engine upgrade back"))
		e.waitFor("Longhorn finishes the confirm once the upgrade is rolled back", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return settled(nodeB)(v, es, rs) && v.Status.CurrentImage == oldImage
		})
		e.assertNoDamage(vol)
		if out, errOut, code := e.plugin("scan", vol); code != 0 {
			t.Errorf("scan after the rollback: exit %d\n%s%s", code, out, errOut)
		}
	})
}

// TestFamilyUpgradeMigrationDeadlockDeleteStep: the maintainers'
// workaround of longhorn#7833 (delete the inactive extra engine, the one on
// the stuck attachment's node: scan's step) applied to the deadlock after
// the drain's confirm. Longhorn then finishes the upgrade but not the
// confirm: spec.nodeID stays node-b while the volume's only engine runs on
// node-a, at every sync (1.4.3: "has already attached to node node-a, but
// asked to attach to node node-b"; 1.5.3: "cannot find the current engine
// for the switching"). The live upgrade clones its new replicas from
// whichever replica of each data directory it meets first, the deleted
// engine's clones included, so in some runs active replicas name the
// deleted engine. Nothing is wiped and no active replica is deleted.
// docs/troubleshooting-migration-family.md says so; the rollback above is
// the way out that converges.
func TestFamilyUpgradeMigrationDeadlockDeleteStep(t *testing.T) {
	t.Parallel()
	onEachRelease(t, upgradeDeadlockRelease, func(t *testing.T, e *env, rel string) {
		const vol = "vol-upgrade-delete"
		mig, _, _ := e.upgradeDeadlock(vol)
		e.deleteEngine(mig) // the step's engine (upgradeDeadlock checked it)
		e.waitFor("the upgrade finishes once one engine is left", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
			return len(es) == 1 && v.Status.CurrentImage == newEngineImage
		})
		evidence := "cannot find the current engine for the switching"
		if !longhorn.MustParseVersion(rel).HasVolumeAttachments() {
			evidence = "has already attached to node " + nodeA + ", but asked to attach to node " + nodeB
		}
		e.stays("the confirm is never finished", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
			return v.Spec.NodeID == nodeB && len(es) == 1 && es[0].Spec.NodeID == nodeA && v.Status.State == longhorn.VolumeStateAttached
		}, evidence)
		e.assertNoDamage(vol)
		_, _, rs := e.state(vol)
		var dangling []string
		for _, r := range rs {
			if r.Spec.Active && r.Spec.EngineName == mig {
				dangling = append(dangling, r.Name)
			}
		}
		out, _, code := e.plugin("scan", vol, "-o", "wide")
		t.Logf("OUTCOME | delete step | %s | upgrade done, confirm not finished | active replicas naming the deleted engine: %v | scan exit %d: %s", rel, dangling, code, tailLines(out, 1))
		// never a wait: Longhorn does not finish this by itself
		if js, _, _ := e.plugin("scan", vol, "-o", "json"); !strings.Contains(js, `"severity": "warning"`) && !strings.Contains(js, `"severity": "critical"`) {
			t.Errorf("scan after the delete step does not warn:\n%s", js)
		} else if longhorn.MustParseVersion(rel).HasCurrentMigrationNodeID() && strings.Contains(js, `"type": "MigrationFinishing"`) &&
			!strings.Contains(js, "cannot find the current engine for the switching") {
			t.Errorf("scan's MigrationFinishing does not say why Longhorn cannot finish:\n%s", js)
		}
	})
}

// imageField is the Volume's engine image field on rel.
func imageField(rel string) string {
	if longhorn.MustParseVersion(rel).AtLeast(1, 6, 0) {
		return "image"
	}
	return "engineImage"
}
