package detect

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The decision table's cases: Longhorn states built from internal/testenv's
// objects. A = the node the volume was attached to before the migration, B =
// the migration target (now status.currentNodeID in the #6642 state), C = a
// third node.

const (
	nodeA = testenv.NodeA
	nodeB = testenv.NodeB
	nodeC = testenv.NodeC

	imgOld = testenv.EngineImage
	imgNew = "longhornio/longhorn-engine:v1.5.1"
)

// Precondition names as classify.go reports them, in order.
const (
	chkVersion    = CheckVersionKnown
	chkMigStarted = CheckMigrationNotStarted
	chkCurrent    = CheckCurrentNode
	chkNoMigFly   = CheckNoMigrationInFlight
	chkSurvivor   = CheckOneRunningEngine
	chkStale      = CheckStaleElsewhere
	chkRobustness = CheckRobustness
	chkUpgrade    = CheckNoUpgrade
	chkMigratable = CheckMigratableRWX
	chkPending    = CheckNoAttachPending
	chkSettled    = CheckReplicasSettled
	chkWorkload   = CheckWorkloadOnCurrentNode
	chkCleanup    = CheckNoExtraCleanup
)

var allChecks = []string{chkVersion, chkMigStarted, chkCurrent, chkNoMigFly, chkMigratable, chkPending, chkSurvivor, chkStale, chkWorkload, chkRobustness, chkSettled, chkCleanup, chkUpgrade}

// t0 is the reference "now" of every state.
var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(t0.Add(-d)) }

// versionCase is one release class of the decision table.
type versionCase struct {
	name    string // class label for test names
	version string // "" = unknown
	v2      bool   // a v2 data-engine volume
}

func (vc versionCase) parsed() longhorn.Version {
	if vc.version == "" {
		return longhorn.Version{}
	}
	return longhorn.MustParseVersion(vc.version)
}

// hasCMN: the release has status.currentMigrationNodeID.
func (vc versionCase) hasCMN() bool { return vc.parsed().HasCurrentMigrationNodeID() }

var (
	vcL13     = versionCase{"L13", testenv.L13, false}
	vcL14a    = versionCase{"L14a", testenv.L14a, false}
	vcL14f    = versionCase{"L14f", testenv.L14f, false}
	vcL15a    = versionCase{"L15a", testenv.L15a, false}
	vcL15f    = versionCase{"L15f-1.5.2", testenv.L15f, false}
	vcL16     = versionCase{"L15f-1.6.0", testenv.L16, false}
	vcUnknown = versionCase{"unknown", "", false}
	vcV2      = versionCase{"v2-1.12.1", "v1.12.1", true}
)

var allVersions = []versionCase{vcL13, vcL14a, vcL14f, vcL15a, vcL15f, vcL16, vcUnknown, vcV2}
var affectedVersions = []versionCase{vcL13, vcL14a, vcL15a}

// newState returns an empty state at t0 for the version case.
func newState(vc versionCase) *longhorn.State { return testenv.NewState(vc.version, t0) }

// engineName is testenv's name of the n-th engine of vol on vc's release.
func engineName(vc versionCase, vol string, n int) string {
	return testenv.EngineName(vc.version, vol, n)
}

// onRelease makes a volume or engine of testenv's what vc's release writes:
// the engine image in spec.image from 1.6 on (spec.engineImage before), and
// the v2 data engine on a v2 case.
func (vc versionCase) onRelease(image, engineImage *string, dataEngine *string) {
	if vc.parsed().AtLeast(1, 6, 0) {
		*image, *engineImage = *engineImage, ""
	}
	if vc.v2 {
		*dataEngine = longhorn.DataEngineV2
	}
}

// volume is testenv's attached, healthy, migratable RWX volume on node, on
// vc's release.
func volume(vc versionCase, name, node string) longhorn.Volume {
	v := testenv.NewVolume(name, node)
	vc.onRelease(&v.Spec.Image, &v.Spec.EngineImage, &v.Spec.DataEngine)
	if vc.v2 {
		v.Spec.EngineNodeID = node
		v.Status.CurrentEngineNodeID = node
	}
	return *v
}

// engine is testenv's active, running engine of vol on node with RW
// replicas rw, created age before t0, on vc's release.
func engine(vc versionCase, vol, name, node string, age time.Duration, rw ...string) longhorn.Engine {
	e := testenv.NewEngine(name, vol, node, true, rw...)
	e.CreationTimestamp = ago(age)
	vc.onRelease(&e.Spec.Image, &e.Spec.EngineImage, &e.Spec.DataEngine)
	return *e
}

// replica is testenv's running replica of vol on node serving engineName,
// in the data directory <vol>-<node>.
func replica(vol, name, node, engineName string, active bool) longhorn.Replica {
	return *testenv.NewReplica(name, vol, node, engineName, active, vol+"-"+node)
}

// scenario is one volume with handles on the interesting objects, so tests
// can mutate the state after building it.
type scenario struct {
	vc    versionCase
	st    *longhorn.State
	vol   string
	engA  string // engine on A (old, stale in the #6642 state)
	engB  string // engine on B (migration engine, survivor in the #6642 state)
	extra string // a third engine when a scenario adds one
}

func (s *scenario) volume() *longhorn.Volume {
	if v := s.st.Volume(s.vol); v != nil {
		return v
	}
	panic("no volume " + s.vol)
}

func (s *scenario) engine(name string) *longhorn.Engine {
	if e := longhorn.Named(s.st.Engines, name); e != nil {
		return e
	}
	panic("no engine " + name)
}

func (s *scenario) replicasOf(engineName string) []*longhorn.Replica {
	return longhorn.Select(s.st.Replicas, func(r *longhorn.Replica) bool { return r.Spec.EngineName == engineName })
}

func (s *scenario) setReplicasActive(engineName string, active bool) {
	for _, r := range s.replicasOf(engineName) {
		r.Spec.Active = active
	}
}

func (s *scenario) removeReplicasOf(engineName string) {
	out := s.st.Replicas[:0]
	for _, r := range s.st.Replicas {
		if r.Spec.EngineName != engineName {
			out = append(out, r)
		}
	}
	s.st.Replicas = out
}

func (s *scenario) removeEngine(name string) {
	out := s.st.Engines[:0]
	for _, e := range s.st.Engines {
		if e.Name != name {
			out = append(out, e)
		}
	}
	s.st.Engines = out
}

func (s *scenario) classify(t *testing.T) (Result, Finding) {
	t.Helper()
	res := Classify(s.st, Options{})
	var f Finding
	n := 0
	for _, x := range res.Findings {
		if x.Volume == s.vol {
			f = x
			n++
		}
	}
	if n > 1 {
		t.Fatalf("%d findings for volume %s: %+v", n, s.vol, res.Findings)
	}
	// ClassifyVolume, used by fix right before acting, must agree.
	g, ok := ClassifyVolume(s.st, s.vol, Options{})
	if ok != (n == 1) {
		t.Fatalf("ClassifyVolume ok=%t but Classify found %d findings", ok, n)
	}
	if ok && !jsonEqual(f, g) {
		t.Fatalf("ClassifyVolume disagrees with Classify:\n%s\n%s", mustJSON(g), mustJSON(f))
	}
	return res, f
}

// healthy: one active engine on A, two active RW replicas.
func healthy(vc versionCase, vol string) *scenario {
	s := &scenario{vc: vc, st: newState(vc), vol: vol, engA: engineName(vc, vol, 0)}
	s.st.Volumes = append(s.st.Volumes, volume(vc, vol, nodeA))
	s.withEngine(s.engA, nodeA, time.Hour, "aaaa", true)
	return s
}

// withEngine adds engine name on node, created age ago, and its replicas
// <vol>-r-<id>0001 on node-a and <vol>-r-<id>0002 on node-c; active is the
// engine's and its replicas' spec.active.
func (s *scenario) withEngine(name, node string, age time.Duration, id string, active bool) {
	r1, r2 := s.vol+"-r-"+id+"0001", s.vol+"-r-"+id+"0002"
	e := engine(s.vc, s.vol, name, node, age, r1, r2)
	e.Spec.Active = active
	s.st.Engines = append(s.st.Engines, e)
	s.st.Replicas = append(s.st.Replicas, replica(s.vol, r1, nodeA, name, active), replica(s.vol, r2, nodeC, name, active))
}

// withThird adds the volume's third engine, s.extra: active, running on
// node, created age before t0, with RW replicas rw. It returns the engine
// in the state, for the caller to change further.
func (s *scenario) withThird(node string, age time.Duration, rw ...string) *longhorn.Engine {
	s.extra = engineName(s.vc, s.vol, 2)
	s.st.Engines = append(s.st.Engines, engine(s.vc, s.vol, s.extra, node, age, rw...))
	return s.engine(s.extra)
}

// migrating: healthy plus a live migration to B that has not been confirmed:
// spec.migrationNodeID=B, a second (inactive, running) engine on B and
// inactive clone replicas for it.
func migrating(vc versionCase, vol string) *scenario {
	s := healthy(vc, vol)
	s.engB = engineName(vc, vol, 1)
	v := s.volume()
	v.Spec.MigrationNodeID = nodeB
	if vc.hasCMN() {
		v.Status.CurrentMigrationNodeID = nodeB
	}
	s.withEngine(s.engB, nodeB, 10*time.Minute, "bbbb", false)
	return s
}

// stuck is the #6642 state: the confirm switched spec.nodeID and
// status.currentNodeID to B and marked the engine on B active, but the old
// engine on A was never deleted and the replica flip never ran.
func stuck(vc versionCase, vol string) *scenario {
	s := migrating(vc, vol)
	v := s.volume()
	v.Spec.NodeID = nodeB
	v.Spec.MigrationNodeID = ""
	v.Status.CurrentNodeID = nodeB
	v.Status.CurrentMigrationNodeID = ""
	if vc.name == vcL15a.name {
		v.Status.CurrentMigrationNodeID = nodeB // confirm never finished
	}
	if vc.v2 {
		v.Spec.EngineNodeID = nodeB
		v.Status.CurrentEngineNodeID = nodeB
		s.withFrontend(nodeB, s.engB)
	}
	s.engine(s.engB).Spec.Active = true
	return s
}

// withFrontend gives every engine an address and the volume one active
// engine frontend on node, sending I/O to engine target (Longhorn 1.12+,
// v2 volumes).
func (s *scenario) withFrontend(node, target string) *longhorn.EngineFrontend {
	for i := range s.st.Engines {
		s.st.Engines[i].Status.IP, s.st.Engines[i].Status.Port = "10.0.1."+fmt.Sprint(i+1), 20001
	}
	ef := testenv.NewEngineFrontend(s.vol+"-ef-0", s.vol, node, true, s.engine(target))
	s.st.EngineFrontends = append(s.st.EngineFrontends, *ef)
	return &s.st.EngineFrontends[len(s.st.EngineFrontends)-1]
}

func findCheck(f Finding, name string) (Check, bool) {
	if c := f.Check(name); c != nil {
		return *c, true
	}
	return Check{}, false
}

func firstFailedName(f Finding) string {
	for _, c := range f.Preconditions {
		if !c.OK {
			return c.Name
		}
	}
	return ""
}

func roleOf(f Finding, engineName string) string {
	for _, e := range f.Evidence.Engines {
		if e.Name == engineName {
			return e.Role
		}
	}
	return "<absent>"
}

func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(b)
}

func jsonEqual(a, b any) bool { return mustJSON(a) == mustJSON(b) }

// rawMap is the shape of instance-manager process maps.
type rawMap = map[string]json.RawMessage
