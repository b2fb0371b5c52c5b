package detect

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Test fixtures: small builders for Longhorn states. A = the node the volume
// was attached to before the migration, B = the migration target (now
// status.currentNodeID in the #6642 state), C = a third node.

const (
	nodeA = "node-a"
	nodeB = "node-b"
	nodeC = "node-c"

	imgOld = "longhornio/longhorn-engine:v1.4.3"
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
	vcL13     = versionCase{"L13", "v1.3.2", false}
	vcL14a    = versionCase{"L14a", "v1.4.3", false}
	vcL14f    = versionCase{"L14f", "v1.4.4", false}
	vcL15a    = versionCase{"L15a", "v1.5.1", false}
	vcL15f    = versionCase{"L15f-1.5.2", "v1.5.2", false}
	vcL16     = versionCase{"L15f-1.6.0", "v1.6.0", false}
	vcUnknown = versionCase{"unknown", "", false}
	vcV2      = versionCase{"v2-1.12.1", "v1.12.1", true}
)

var allVersions = []versionCase{vcL13, vcL14a, vcL14f, vcL15a, vcL15f, vcL16, vcUnknown, vcV2}
var affectedVersions = []versionCase{vcL13, vcL14a, vcL15a}

// newState returns an empty state at t0 for the version case.
func newState(vc versionCase) *longhorn.State {
	return &longhorn.State{
		Namespace:            longhorn.DefaultNamespace,
		Version:              vc.parsed(),
		VersionSource:        "test",
		Now:                  t0,
		InstanceManagersRead: true,
	}
}

// engineName follows the naming of the release: "<vol>-e-N" on deterministic
// releases, "<vol>-e-<8 hex>" otherwise. n orders them (0 = first engine).
func engineName(vc versionCase, vol string, n int) string {
	if vc.parsed().DeterministicEngineNames() {
		return fmt.Sprintf("%s-e-%d", vol, n)
	}
	random := []string{"a1b2c3d4", "5e6f7a8b", "c9d0e1f2", "3a4b5c6d"}
	return vol + "-e-" + random[n%len(random)]
}

// volume builds an attached, healthy, migratable RWX volume on node.
func volume(vc versionCase, name, node string) longhorn.Volume {
	v := longhorn.Volume{}
	v.Name = name
	v.Namespace = longhorn.DefaultNamespace
	v.Spec = longhorn.VolumeSpec{
		NodeID: node, Migratable: true, AccessMode: longhorn.AccessModeRWX,
		NumberOfReplicas: 2, Frontend: "blockdev",
	}
	v.Status = longhorn.VolumeStatus{
		OwnerID: node, State: longhorn.VolumeStateAttached, Robustness: longhorn.RobustnessHealthy,
		CurrentNodeID: node, CurrentImage: imgOld,
	}
	vc.setImage(&v.Spec.Image, &v.Spec.EngineImage, imgOld)
	if vc.v2 {
		v.Spec.DataEngine = longhorn.DataEngineV2
		v.Spec.EngineNodeID = node
		v.Status.CurrentEngineNodeID = node
	}
	return v
}

// setImage writes img into the spec field of vc's release: spec.image from
// 1.6 on, spec.engineImage before.
func (vc versionCase) setImage(image, engineImage *string, img string) {
	if vc.parsed().AtLeast(1, 6, 0) {
		*image = img
	} else {
		*engineImage = img
	}
}

// engine builds an active, running engine with an endpoint and RW replicas.
func engine(vc versionCase, vol, name, node string, created time.Duration, rw ...string) longhorn.Engine {
	e := longhorn.Engine{}
	e.Name = name
	e.Namespace = longhorn.DefaultNamespace
	e.CreationTimestamp = ago(created)
	e.Labels = map[string]string{longhorn.VolumeLabel: vol}
	e.Spec = longhorn.EngineSpec{VolumeName: vol, NodeID: node, Active: true, DesireState: longhorn.StateRunning, Frontend: "blockdev"}
	vc.setImage(&e.Spec.Image, &e.Spec.EngineImage, imgOld)
	if vc.v2 {
		e.Spec.DataEngine = longhorn.DataEngineV2
	}
	e.Status = longhorn.EngineStatus{
		OwnerID: node, CurrentState: longhorn.StateRunning, Endpoint: "/dev/longhorn/" + vol,
		InstanceManagerName: "instance-manager-" + node, CurrentImage: imgOld,
		ReplicaModeMap: map[string]string{},
	}
	for _, r := range rw {
		e.Status.ReplicaModeMap[r] = longhorn.ModeRW
	}
	return e
}

func replica(vol, name, node, engineName string, active bool) longhorn.Replica {
	r := longhorn.Replica{}
	r.Name = name
	r.Namespace = longhorn.DefaultNamespace
	r.Labels = map[string]string{longhorn.VolumeLabel: vol}
	r.Spec = longhorn.ReplicaSpec{
		VolumeName: vol, NodeID: node, EngineName: engineName, Active: active,
		DesireState: longhorn.StateRunning, DataDirectoryName: vol + "-" + node,
	}
	r.Status = longhorn.ReplicaStatus{OwnerID: node, CurrentState: longhorn.StateRunning}
	return r
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
	}
	s.engine(s.engB).Spec.Active = true
	return s
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
