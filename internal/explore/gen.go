package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Nodes are the Longhorn nodes of every explored world.
var Nodes = []string{testenv.NodeA, testenv.NodeB, testenv.NodeC}

// State is one generated volume state: the choices it is built from, small
// enough to shrink field by field and to save as a fixture. Build turns it
// into objects with internal/testenv's builders.
type State struct {
	Release string `json:"release"`
	// Story is where the generator started before it perturbed fields:
	// attached, detached, migrating, stuck, pending-cleanup, finishing,
	// kb-deleted. Informative only.
	Story string `json:"story"`

	NodeID                 string `json:"nodeID,omitempty"`
	CurrentNodeID          string `json:"currentNodeID,omitempty"`
	MigrationNodeID        string `json:"migrationNodeID,omitempty"`
	CurrentMigrationNodeID string `json:"currentMigrationNodeID,omitempty"` // 1.5+
	PendingNodeID          string `json:"pendingNodeID,omitempty"`          // releases whose CRD has it
	VolumeState            string `json:"volumeState"`
	Robustness             string `json:"robustness"`
	// RWO is an rwo, not migratable volume; otherwise migratable rwx.
	RWO bool `json:"rwo,omitempty"`

	Engines  []Engine  `json:"engines"`
	Replicas []Replica `json:"replicas"`
	// Tickets are the nodes with a csi-attacher ticket (1.5+).
	Tickets []string `json:"tickets,omitempty"`

	// OldImage: the volume, its engines and replicas run an older engine
	// image than the default one (status.currentImage).
	OldImage bool `json:"oldImage,omitempty"`
	// AutoUpgrade: concurrent-automatic-engine-upgrade-per-node-limit > 0.
	// Longhorn's EngineImageController, which cannot run here (it needs
	// engine image pods), then sets spec.engineImage/spec.image of an
	// old-image volume to the default image when it picks the volume; the
	// explorer plays that pick (UpgradePicked).
	AutoUpgrade bool `json:"autoUpgrade,omitempty"`
	// BestEffort sets the volume's dataLocality to best-effort.
	BestEffort bool `json:"bestEffort,omitempty"`
	// AutoBalance sets the volume's replicaAutoBalance to best-effort.
	AutoBalance bool `json:"autoBalance,omitempty"`
}

// Engine is one Engine CR of a generated state.
type Engine struct {
	Node     string `json:"node,omitempty"`
	Active   bool   `json:"active"`
	Deleting bool   `json:"deleting,omitempty"`
	// State is status.currentState: running, stopped or error.
	State string `json:"state"`
}

// Replica is one Replica CR of a generated state.
type Replica struct {
	Node string `json:"node"`
	// Engine indexes State.Engines; -1 names an engine that no longer
	// exists (deleted by hand).
	Engine int  `json:"engine"`
	Active bool `json:"active"`
	// Dir numbers the data directory; a migration clone shares its
	// original's.
	Dir      int  `json:"dir"`
	Healthy  bool `json:"healthy"`
	Failed   bool `json:"failed,omitempty"`
	Deleting bool `json:"deleting,omitempty"`
}

// stories are the starting points, each a state a volume is met in.
var stories = []string{"attached", "detached", "migrating", "stuck", "pending-cleanup", "finishing", "kb-deleted", "rolled-back"}

// confirmStories came after the first eight. They are drawn from a stream
// of their own (one state in eight), so that the states the others give
// for a seed, and the fixtures and known disagreements found on them, stay
// as they were.
var confirmStories = []string{"confirming", "confirm-parked"}

// Generate returns state i of seed for release: deterministic in (seed, i).
func Generate(release string, seed uint64, i int) State {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	ver := longhorn.MustParseVersion(release)
	name := stories[rng.IntN(len(stories))]
	if side := rand.New(rand.NewPCG(^seed, uint64(i))); side.IntN(8) == 0 {
		name = confirmStories[side.IntN(len(confirmStories))]
	}
	s := story(rng, release, name)
	perturb(rng, ver, &s)
	return s
}

// story builds the unperturbed state: engine 0 on node-a, the migration
// engine (if any) on node-b, 1–3 data directories.
func story(rng *rand.Rand, release, name string) State {
	ver := longhorn.MustParseVersion(release)
	a, b := testenv.NodeA, testenv.NodeB
	s := State{Release: release, Story: name, VolumeState: longhorn.VolumeStateAttached, Robustness: longhorn.RobustnessHealthy}
	dirs := 1 + rng.IntN(3)
	origs := func(engine int, active bool) {
		for d := 0; d < dirs; d++ {
			s.Replicas = append(s.Replicas, Replica{Node: Nodes[d], Engine: engine, Active: active, Dir: d, Healthy: true})
		}
	}
	clones := func(engine int, active bool) {
		for d := 0; d < dirs; d++ {
			s.Replicas = append(s.Replicas, Replica{Node: Nodes[d], Engine: engine, Active: active, Dir: d, Healthy: true})
		}
	}
	running := longhorn.StateRunning
	switch name {
	case "attached":
		s.NodeID, s.CurrentNodeID = a, a
		s.Engines = []Engine{{Node: a, Active: true, State: running}}
		origs(0, true)
		s.Tickets = []string{a}
	case "detached":
		s.VolumeState = longhorn.VolumeStateDetached
		s.Robustness = "unknown"
		s.Engines = []Engine{{Active: true, State: longhorn.StateStopped}}
		origs(0, true)
	case "migrating":
		s.NodeID, s.CurrentNodeID, s.MigrationNodeID = a, a, b
		if ver.HasCurrentMigrationNodeID() {
			s.CurrentMigrationNodeID = b
		}
		s.Engines = []Engine{{Node: a, Active: true, State: running}, {Node: b, Active: false, State: running}}
		origs(0, true)
		clones(1, false)
		s.Tickets = []string{a, b}
	case "stuck": // #6642: the confirm saved engine 1 active, the old one stayed
		s.NodeID, s.CurrentNodeID = b, b
		s.Engines = []Engine{{Node: a, Active: true, State: running}, {Node: b, Active: true, State: running}}
		origs(0, true)
		clones(1, false)
		s.Tickets = []string{b}
	case "pending-cleanup": // a confirm deleting the old engine, flags flipped
		s.NodeID, s.CurrentNodeID = b, b
		s.Engines = []Engine{{Node: a, Active: true, Deleting: true, State: running}, {Node: b, Active: true, State: running}}
		origs(0, false)
		clones(1, true)
		s.Tickets = []string{b}
	case "finishing": // confirm done but for the removal of the inactive old engine
		s.NodeID, s.CurrentNodeID = b, b
		s.Engines = []Engine{{Node: a, Active: false, State: running}, {Node: b, Active: true, State: running}}
		origs(0, false)
		clones(1, true)
		s.Tickets = []string{b}
	case "kb-deleted": // the stale engine deleted by hand before the flip
		s.NodeID, s.CurrentNodeID = b, b
		s.Engines = []Engine{{Node: b, Active: true, State: running}}
		origs(-1, true)
		clones(0, false)
		s.Tickets = []string{b}
	case "confirming", "confirm-parked":
		// the confirm written (spec.nodeID moved to the target, the
		// request and the source's ticket gone), not yet switched over;
		// parked: Longhorn 1.4 stopped the migration engine for a restart
		// (spec.nodeID emptied, stopped) just before, longhorn#6961
		s.NodeID, s.CurrentNodeID = b, a
		if ver.HasCurrentMigrationNodeID() {
			s.CurrentMigrationNodeID = b
		}
		mig := Engine{Node: b, Active: false, State: running}
		if name == "confirm-parked" {
			mig = Engine{Active: false, State: longhorn.StateStopped}
		}
		s.Engines = []Engine{{Node: a, Active: true, State: running}, mig}
		origs(0, true)
		clones(1, false)
		s.Tickets = []string{b}
	case "rolled-back": // rollback done but for the removal of the migration engine
		s.NodeID, s.CurrentNodeID = a, a
		s.Engines = []Engine{{Node: a, Active: true, State: running}, {Node: b, Active: false, State: running}}
		origs(0, true)
		clones(1, false)
		s.Tickets = []string{a}
	default:
		panic("explore: unknown story " + name)
	}
	return s
}

// perturb changes a few fields at random, each with a small probability,
// within what the release's objects can hold.
func perturb(rng *rand.Rand, ver longhorn.Version, s *State) {
	p := func(pct int) bool { return rng.IntN(100) < pct }
	node := func() string { return Nodes[rng.IntN(len(Nodes))] }
	nodeOrNone := func() string {
		if p(30) {
			return ""
		}
		return node()
	}
	if p(10) {
		s.NodeID = nodeOrNone()
	}
	if p(10) {
		s.CurrentNodeID = nodeOrNone()
	}
	if p(8) {
		s.MigrationNodeID = nodeOrNone()
	}
	if ver.HasCurrentMigrationNodeID() && p(8) {
		s.CurrentMigrationNodeID = nodeOrNone()
	}
	if HasPendingNodeID(ver) && p(6) {
		s.PendingNodeID = node()
	}
	if p(10) {
		s.Robustness = []string{longhorn.RobustnessHealthy, "degraded", "faulted", "unknown"}[rng.IntN(4)]
	}
	if p(5) {
		s.VolumeState = []string{longhorn.VolumeStateAttached, longhorn.VolumeStateDetached, "attaching", "detaching"}[rng.IntN(4)]
	}
	if p(5) {
		s.RWO = true
	}
	for i := range s.Engines {
		e := &s.Engines[i]
		if p(8) {
			e.Active = !e.Active
		}
		if p(5) && !e.Deleting {
			e.Deleting = true
		}
		if p(6) {
			e.State = []string{longhorn.StateRunning, longhorn.StateStopped, longhorn.StateError}[rng.IntN(3)]
		}
		if p(4) {
			e.Node = nodeOrNone()
		}
	}
	if len(s.Engines) < 3 && p(5) { // an extra engine on node-c
		s.Engines = append(s.Engines, Engine{Node: testenv.NodeC, Active: p(50), State: longhorn.StateRunning})
	}
	for i := range s.Replicas {
		r := &s.Replicas[i]
		if p(6) {
			r.Active = !r.Active
		}
		if p(4) {
			r.Healthy = false
		}
		if p(4) {
			r.Failed = true
		}
		if p(3) && !r.Active {
			r.Deleting = true // only an inactive one: deleting an active one wipes by construction
		}
		if p(3) && len(s.Engines) > 0 {
			r.Engine = rng.IntN(len(s.Engines)+1) - 1
		}
	}
	if ver.HasVolumeAttachments() {
		if p(10) {
			s.Tickets = append(s.Tickets, testenv.NodeC)
		}
		if p(8) && len(s.Tickets) > 0 {
			s.Tickets = s.Tickets[1:]
		}
	} else {
		s.Tickets = nil
	}
	s.OldImage = p(15)
	s.AutoUpgrade = s.OldImage && p(60)
	s.BestEffort = p(15)
	s.AutoBalance = p(15)
}

// HasPendingNodeID reports whether the release's Volume CRD has
// status.pendingNodeID (gone in 1.9).
func HasPendingNodeID(v longhorn.Version) bool { return !v.AtLeast(1, 9, 0) }

// Valid reports why a state cannot be written, "" when it can.
func (s *State) Valid() string {
	for i, r := range s.Replicas {
		if r.Engine < -1 || r.Engine >= len(s.Engines) {
			return fmt.Sprintf("replica %d names engine %d of %d", i, r.Engine, len(s.Engines))
		}
	}
	if len(s.Engines) == 0 {
		return "no engine"
	}
	return ""
}

// Clone is a deep copy.
func (s State) Clone() State {
	s.Engines = slices.Clone(s.Engines)
	s.Replicas = slices.Clone(s.Replicas)
	s.Tickets = slices.Clone(s.Tickets)
	return s
}

// Simpler lists the states one step simpler than s, simplest steps first:
// a field back to its story value or its zero, one object fewer. Shrinking
// keeps the first that still fails.
func (s State) Simpler() []State {
	var out []State
	add := func(f func(*State)) {
		c := s.Clone()
		f(&c)
		if c.Valid() == "" && !equal(c, s) {
			out = append(out, c)
		}
	}
	add(func(c *State) { c.AutoUpgrade, c.OldImage = false, false })
	add(func(c *State) { c.AutoUpgrade = false })
	add(func(c *State) { c.BestEffort = false })
	add(func(c *State) { c.AutoBalance = false })
	add(func(c *State) { c.PendingNodeID = "" })
	add(func(c *State) { c.RWO = false })
	add(func(c *State) { c.Robustness = longhorn.RobustnessHealthy })
	for i := range s.Engines {
		add(func(c *State) { c.removeEngine(i) })
	}
	// a whole data directory (original and clones) at once, then one replica
	dirs := map[int]bool{}
	for _, r := range s.Replicas {
		dirs[r.Dir] = true
	}
	if len(dirs) > 1 {
		for d := range dirs {
			add(func(c *State) {
				c.Replicas = slices.DeleteFunc(c.Replicas, func(r Replica) bool { return r.Dir == d })
			})
		}
	}
	for i := range s.Replicas {
		add(func(c *State) { c.Replicas = slices.Delete(c.Replicas, i, i+1) })
		add(func(c *State) { c.Replicas[i].Failed = false })
		add(func(c *State) { c.Replicas[i].Healthy = true })
		add(func(c *State) { c.Replicas[i].Deleting = false })
	}
	for i := range s.Engines {
		add(func(c *State) { c.Engines[i].State = longhorn.StateRunning })
		add(func(c *State) { c.Engines[i].Deleting = false })
	}
	for i := range s.Tickets {
		add(func(c *State) { c.Tickets = slices.Delete(c.Tickets, i, i+1) })
	}
	add(func(c *State) { c.CurrentMigrationNodeID = "" })
	add(func(c *State) { c.MigrationNodeID = "" })
	add(func(c *State) { c.VolumeState = longhorn.VolumeStateAttached })
	return out
}

// removeEngine drops engine i; replicas that named it name a vanished one.
func (s *State) removeEngine(i int) {
	s.Engines = slices.Delete(s.Engines, i, i+1)
	for j := range s.Replicas {
		switch r := &s.Replicas[j]; {
		case r.Engine == i:
			r.Engine = -1
		case r.Engine > i:
			r.Engine--
		}
	}
}

func equal(a, b State) bool {
	return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b)
}

// UpgradePicked is the EngineImageController's automatic engine upgrade
// played on s: with AutoUpgrade, an old-image volume that is detached, or
// attached with robustness healthy, gets the default image in its spec
// (getVolumesForEngineImageUpgrading and canDoLiveEngineImageUpgrade of
// v1.4.3's engine_image_controller.go; the per-node limit is taken as
// large enough for every volume). Its status, frozen by a stuck volume,
// reads like a healthy one's: the deadlock of longhorn#7833.
func (s *State) UpgradePicked() bool {
	if !s.AutoUpgrade || !s.OldImage {
		return false
	}
	return s.VolumeState == longhorn.VolumeStateDetached ||
		(s.VolumeState == longhorn.VolumeStateAttached && s.Robustness == longhorn.RobustnessHealthy)
}
