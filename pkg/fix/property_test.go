package fix

import (
	"math/rand/v2"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Over random states: a plan that acts never names the survivor, only
// acts when every precondition holds on an affected release, deletes only
// on 1.5.0/1.5.1, and any later change to an object the write depends on
// makes the re-check refuse it.
func TestPlanProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(6642, 4))
	acted := 0
	for i := 0; i < 3000; i++ {
		version := genVersions[rng.IntN(len(genVersions))]
		st := stateOf(randomObjects(rng, version, "vol"))
		s := []Strategy{StrategyAuto, StrategyDeactivate, StrategyDelete}[rng.IntN(3)]
		p := planOne(t, st, "vol", s)
		if !p.Acts() {
			continue
		}
		acted++
		f := p.Finding
		v := st.Volume("vol")
		fail := func(msg string) {
			t.Helper()
			t.Fatalf("case %d (%s, --strategy=%s): %s\nplan %+v\nfinding %+v", i, version, s, msg, p, f)
		}
		if f.Refused() {
			fail("acts although a precondition failed")
		}
		if !st.Version.Affected() && (!st.Version.Class().Fixed() || st.Version.AtLeast(1, 13, 0)) {
			fail("acts on a release it does not repair")
		}
		if p.Action == detect.ActionDelete && (st.Version.Class() != longhorn.ClassL15a || v.Status.CurrentMigrationNodeID != v.Status.CurrentNodeID) {
			fail("deletes outside 1.5.0/1.5.1 with currentMigrationNodeID on the current node")
		}
		// Every replica write is pinned, and afterwards only replicas of
		// the survivor are active.
		flags := map[string]bool{}
		for _, r := range st.Replicas {
			flags[r.Name] = r.Spec.Active && r.Spec.EngineName == p.Keep.Name
		}
		for _, w := range p.Replicas {
			rep := longhorn.Named(st.Replicas, w.Name)
			if rep == nil || w.UID != string(rep.UID) || w.ResourceVersion != rep.ResourceVersion || w.Deleting {
				fail("replica write " + w.Name + " not pinned to the replica as read")
			}
			flags[w.Name] = w.ToActive && w.ToEngine == p.Keep.Name
			if w.ToActive && w.ToEngine != p.Keep.Name {
				fail("replica " + w.Name + " left active for another engine")
			}
		}
		for _, r := range st.Replicas {
			if r.Spec.Active && r.Spec.EngineName != p.Keep.Name && !flags[r.Name] {
				written := false
				for _, w := range p.Replicas {
					written = written || w.Name == r.Name
				}
				if !written {
					fail("replica " + r.Name + " stays active for " + r.Spec.EngineName)
				}
			}
		}
		serving, onServing := v.ServingNodeID(), 0
		for _, e := range st.Engines {
			if e.Spec.NodeID == serving {
				onServing++
				if e.Name != p.Keep.Name || !e.IsActive() || e.Status.CurrentState != longhorn.StateRunning {
					fail("the engine on the current node is not the running survivor")
				}
			}
		}
		if onServing != 1 || v.Status.CurrentNodeID != v.Spec.NodeID || v.Spec.MigrationNodeID != "" {
			fail("volume preconditions do not hold")
		}
		for _, e := range p.Stale {
			eng := longhorn.Named(st.Engines, e.Name)
			if e.Name == p.Keep.Name || e.UID == p.Keep.UID || eng == nil || !eng.IsActive() || eng.Spec.NodeID == serving || e.ResourceVersion != eng.ResourceVersion {
				fail("stale engine " + e.Name + " is the survivor, inactive, on the current node or not pinned")
			}
		}

		// Any change to a pinned object after the plan is caught.
		switch k := rng.IntN(3); {
		case k == 0 || len(p.Stale) == 0:
			v.ResourceVersion += "1"
		case k == 1:
			longhorn.Named(st.Engines, p.Stale[rng.IntN(len(p.Stale))].Name).ResourceVersion += "1"
		default:
			longhorn.Named(st.Engines, p.Stale[rng.IntN(len(p.Stale))].Name).UID += "x"
		}
		if changedSince(p, planOne(t, st, "vol", s)) == "" {
			fail("a change after the plan went unnoticed")
		}
	}
	if acted < 100 {
		t.Errorf("only %d of 3000 random states were repairable: the generator is too narrow", acted)
	}
}
