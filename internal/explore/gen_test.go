package explore

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TestGenerate: states are deterministic in (seed, index), valid, cover
// every story, and hold only fields the release has.
func TestGenerate(t *testing.T) {
	for _, rel := range lhreal.Releases() {
		ver := longhorn.MustParseVersion(rel)
		seen := map[string]bool{}
		for i := range 400 {
			s := Generate(rel, 1, i)
			if again := Generate(rel, 1, i); !reflect.DeepEqual(s, again) {
				t.Fatalf("%s state %d is not deterministic:\n%+v\n%+v", rel, i, s, again)
			}
			if why := s.Valid(); why != "" {
				t.Fatalf("%s state %d invalid: %s", rel, i, why)
			}
			if !ver.HasVolumeAttachments() && (len(s.Tickets) > 0 || s.CurrentMigrationNodeID != "") {
				t.Errorf("%s state %d has 1.5+ fields: %+v", rel, i, s)
			}
			if !HasPendingNodeID(ver) && s.PendingNodeID != "" {
				t.Errorf("%s state %d has status.pendingNodeID", rel, i)
			}
			for _, r := range s.Replicas {
				if r.Deleting && r.Active {
					t.Errorf("%s state %d deletes an active replica by construction", rel, i)
				}
			}
			seen[s.Story] = true
			for _, c := range s.Simpler() {
				if c.Valid() != "" || reflect.DeepEqual(c, s) {
					t.Fatalf("%s state %d: a simpler state is invalid or the same", rel, i)
				}
			}
		}
		for _, st := range append(slices.Clone(stories), confirmStories...) {
			if !seen[st] {
				t.Errorf("%s: story %s never generated in 400 states", rel, st)
			}
		}
	}
}

// TestBuild: a built state has the objects its choices say: engines and
// replicas named as the release names them, an original and its clone on
// one data directory, the tickets, and scan classifies it as the story.
func TestBuild(t *testing.T) {
	s := State{Release: "v1.5.3", Story: "stuck", NodeID: Nodes[1], CurrentNodeID: Nodes[1],
		VolumeState: longhorn.VolumeStateAttached, Robustness: longhorn.RobustnessHealthy,
		Engines:  []Engine{{Node: Nodes[0], Active: true, State: longhorn.StateRunning}, {Node: Nodes[1], Active: true, State: longhorn.StateRunning}},
		Replicas: []Replica{{Node: Nodes[0], Engine: 0, Active: true, Healthy: true}, {Node: Nodes[0], Engine: 1, Healthy: true}},
		Tickets:  []string{Nodes[1]}}
	o := Build(s, "vol", Images{Default: "img:new"}).Objects
	if len(o.Volumes) != 1 || len(o.Engines) != 2 || len(o.Replicas) != 2 || len(o.VAs) != 1 {
		t.Fatalf("objects: %d volumes, %d engines, %d replicas, %d attachments", len(o.Volumes), len(o.Engines), len(o.Replicas), len(o.VAs))
	}
	r0, r1 := o.Replicas[0], o.Replicas[1]
	if r0.Spec.DataDirectoryName != r1.Spec.DataDirectoryName || r0.Name == r1.Name || r1.Spec.EngineName != o.Engines[1].Name || r1.Spec.Active {
		t.Errorf("the clone does not share its original's directory or points elsewhere: %+v %+v", r0.Spec, r1.Spec)
	}
	if _, ok := o.Engines[1].Spec.ReplicaAddressMap[r1.Name]; !ok {
		t.Errorf("engine 1 does not list its clone: %v", o.Engines[1].Spec.ReplicaAddressMap)
	}
	res := classify(s.Release, o)
	if len(res.Findings) != 1 || res.Findings[0].Type != detect.TypeMultipleActiveEngines {
		t.Fatalf("scan of the stuck story: %+v", res.Findings)
	}
	if v := VerdictOf(&res.Findings[0]); v != VerdictStuck {
		t.Errorf("verdict %s, want stuck", v)
	}
}

// TestConfirmStories: the confirm stories, unperturbed, are what scan
// reads them as: before 1.5 a parked migration engine beside a confirm is
// ConfirmWithoutEngine, stuck (Longhorn 1.4.3 never finishes it,
// internal/realtest's TestConfirmWithoutEngineOnLonghorn); from 1.5 it is a
// finish with no engine on spec.nodeID, stuck too (Longhorn 1.5.3 stayed
// there, seed 31 in findings.md; its finish takes the engine on
// spec.nodeID as the current one); with the engine on the target, a
// confirm Longhorn finishes itself.
func TestConfirmStories(t *testing.T) {
	for _, c := range []struct {
		release, story string
		want           Verdict
	}{
		{"v1.4.3", "confirm-parked", VerdictStuck},
		{"v1.4.3", "confirming", VerdictWait},
		{"v1.5.3", "confirm-parked", VerdictStuck},
		{"v1.5.3", "confirming", VerdictWait},
	} {
		s := story(rand.New(rand.NewPCG(1, 1)), c.release, c.story)
		res := classify(c.release, Build(s, "vol", Images{Default: "img:new"}).Objects)
		if len(res.Findings) != 1 {
			t.Fatalf("%s %s: findings %+v", c.release, c.story, res.Findings)
		}
		f := res.Findings[0]
		if v := VerdictOf(&f); v != c.want {
			t.Errorf("%s %s: %s is %s, want %s", c.release, c.story, f.Type, v, c.want)
		}
		if parked := c.release == "v1.4.3" && c.story == "confirm-parked"; parked != (f.Type == detect.TypeConfirmWithoutEngine) {
			t.Errorf("%s %s: finding %s", c.release, c.story, f.Type)
		}
	}
}

// classify is scan's reading of built objects.
func classify(release string, o *testenv.Objects) detect.Result {
	st := &longhorn.State{Version: longhorn.MustParseVersion(release), Now: time.Now()}
	for _, v := range o.Volumes {
		st.Volumes = append(st.Volumes, *v)
	}
	for _, e := range o.Engines {
		st.Engines = append(st.Engines, *e)
	}
	for _, r := range o.Replicas {
		st.Replicas = append(st.Replicas, *r)
	}
	for _, va := range o.VAs {
		st.VolumeAttachments = append(st.VolumeAttachments, *va)
	}
	return detect.Classify(st, detect.Options{})
}
