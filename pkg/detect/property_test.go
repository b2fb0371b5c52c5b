package detect

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Property test: random small states, invariants that must hold whatever
// the decision table says about a particular row.

var genVersions = []string{"", "v1.2.6", "v1.3.2", "v1.4.3", "v1.4.4", "v1.5.0", "v1.5.1", "v1.5.2", "v1.5.3", "v1.6.0", "v1.9.1", "v1.10.0", "v1.11.0", "v1.12.1", "v1.13.0"}

type gen struct{ r *rand.Rand }

func (g gen) pct(p int) bool { return g.r.IntN(100) < p }

func (g gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// node returns "", a, b or c; bias is returned with probability p.
func (g gen) node(bias string, p int) string {
	if bias != "" && g.pct(p) {
		return bias
	}
	return g.pick("", "node-a", "node-b", "node-c", "node-a", "node-b")
}

func (g gen) hex8(digitsOnly bool) string {
	const hexdigits, decdigits = "0123456789abcdef", "0123456789"
	set := hexdigits
	if digitsOnly {
		set = decdigits
	}
	b := make([]byte, 8)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

func (g gen) state() *longhorn.State {
	st := &longhorn.State{Namespace: "longhorn-system", Now: t0, InstanceManagersRead: g.pct(80)}
	if v := g.pick(genVersions...); v != "" {
		st.Version = longhorn.MustParseVersion(v)
	}
	names := map[string]bool{} // every object name, to keep them unique
	nVol := 1 + g.r.IntN(2)
	for i := 0; i < nVol; i++ {
		if g.pct(35) {
			g.nearStuck(st, fmt.Sprintf("vol-%d", i+1), names)
		} else {
			g.volume(st, fmt.Sprintf("vol-%d", i+1), names)
		}
	}
	if g.pct(15) { // engine of a deleted volume
		e := longhorn.Engine{}
		e.Name = "ghost-e-0"
		e.Spec.VolumeName = "ghost"
		e.Spec.Active = g.pct(50)
		st.Engines = append(st.Engines, e)
		names[e.Name] = true
	}
	if g.pct(40) {
		nIM := 1 + g.r.IntN(2)
		for i := 0; i < nIM; i++ {
			im := longhorn.InstanceManager{}
			im.Name = fmt.Sprintf("instance-manager-%d", i)
			im.Spec.NodeID = g.node("", 0)
			aio := st.Version.AtLeast(1, 5, 0) && g.pct(70)
			procs := map[string]json.RawMessage{}
			for _, n := range longhorn.SortedKeys(names) {
				// instanceEngines lists engines only; the ≤1.4 status.instances
				// of an engine or replica manager may hold either here.
				if (!aio || strings.Contains(n, "-e-")) && g.pct(40) {
					procs[n] = json.RawMessage(`{}`)
				}
			}
			if g.pct(30) {
				procs[fmt.Sprintf("vol-%d-e-%s", 1+g.r.IntN(3), g.hex8(false))] = json.RawMessage(`{}`)
			}
			if aio {
				im.Spec.Type = "aio"
				im.Status.InstanceEngines = procs
			} else {
				im.Spec.Type = g.pick("engine", "replica")
				im.Status.Instances = procs
			}
			st.InstanceManagers = append(st.InstanceManagers, im)
		}
	}
	return st
}

func (g gen) volume(st *longhorn.State, name string, names map[string]bool) {
	v := longhorn.Volume{}
	v.Name = name
	cur := g.node("", 0)
	v.Status.CurrentNodeID = cur
	v.Spec.NodeID = g.node(cur, 70)
	if g.pct(30) {
		v.Spec.MigrationNodeID = g.node("", 0)
	}
	switch {
	case g.pct(55):
	case g.pct(60):
		v.Status.CurrentMigrationNodeID = cur
	default:
		v.Status.CurrentMigrationNodeID = g.node("", 0)
	}
	v.Status.Robustness = g.pick(longhorn.RobustnessHealthy, longhorn.RobustnessHealthy, longhorn.RobustnessDegraded,
		longhorn.RobustnessFaulted, longhorn.RobustnessUnknown, "")
	v.Status.State = g.pick(longhorn.VolumeStateAttached, longhorn.VolumeStateAttached, longhorn.VolumeStateAttached,
		longhorn.VolumeStateDetached, longhorn.VolumeStateAttaching)
	v.Spec.EngineImage = "img-1"
	if g.pct(30) {
		v.Spec.Image = g.pick("img-1", "img-2")
	}
	v.Status.CurrentImage = g.pick("img-1", "img-1", "img-1", "img-1", "img-2", "")
	v.Spec.Migratable, v.Spec.AccessMode = g.pct(85), g.pick(longhorn.AccessModeRWX, longhorn.AccessModeRWX, longhorn.AccessModeRWX, longhorn.AccessModeRWO)
	if g.pct(15) {
		v.Status.PendingNodeID = g.node(cur, 40)
	}
	if g.pct(25) {
		v.Spec.DataEngine = longhorn.DataEngineV2
		if g.pct(50) {
			v.Status.CurrentEngineNodeID = g.node(cur, 60)
		}
		if g.pct(15) {
			v.Status.SwitchoverState = "switching-over"
		}
	} else if g.pct(10) {
		v.Spec.BackendStoreDriver = longhorn.DataEngineV1
	}
	st.Volumes = append(st.Volumes, v)

	deterministic := g.pct(50)
	nEng := 1 + g.r.IntN(4)
	var engNames []string
	for i := 0; i < nEng; i++ {
		e := longhorn.Engine{}
		for {
			switch {
			case deterministic && g.pct(85):
				e.Name = fmt.Sprintf("%s-e-%d", name, g.r.IntN(6))
			default: // legacy random name, sometimes all digits
				e.Name = name + "-e-" + g.hex8(g.pct(25))
			}
			if !names[e.Name] {
				break
			}
		}
		names[e.Name] = true
		engNames = append(engNames, e.Name)
		e.CreationTimestamp = metav1.NewTime(t0.Add(-time.Duration(g.r.IntN(4)) * time.Minute))
		if g.pct(85) {
			e.Spec.VolumeName = name
		} else {
			e.Labels = map[string]string{longhorn.VolumeLabel: name}
		}
		e.Spec.NodeID = g.node(cur, 35)
		e.Spec.Active = g.pct(70)
		if g.pct(20) {
			ts := metav1.NewTime(t0.Add(-time.Duration(g.r.IntN(30)) * time.Minute))
			e.DeletionTimestamp = &ts
		}
		e.Spec.DesireState = g.pick(longhorn.StateRunning, longhorn.StateRunning, longhorn.StateRunning, longhorn.StateStopped)
		e.Status.CurrentState = g.pick(longhorn.StateRunning, longhorn.StateRunning, longhorn.StateRunning,
			longhorn.StateStopped, longhorn.StateError, longhorn.StateStarting, "")
		if g.pct(75) {
			e.Status.Endpoint = "/dev/longhorn/" + name
		}
		e.Status.OwnerID = e.Spec.NodeID
		if n := g.r.IntN(4); n > 0 {
			e.Status.ReplicaModeMap = map[string]string{}
			for j := 0; j < n; j++ {
				e.Status.ReplicaModeMap[fmt.Sprintf("%s-r-%d", name, j)] = g.pick(longhorn.ModeRW, longhorn.ModeRW, longhorn.ModeWO, longhorn.ModeERR)
			}
		}
		if v.Spec.DataEngine != "" && g.pct(80) {
			e.Spec.DataEngine = v.Spec.DataEngine
		}
		st.Engines = append(st.Engines, e)
	}
	nRep := g.r.IntN(5)
	for j := 0; j < nRep; j++ {
		rp := longhorn.Replica{}
		rp.Name = fmt.Sprintf("%s-r-%s", name, g.hex8(false))
		if names[rp.Name] {
			continue
		}
		names[rp.Name] = true
		rp.Spec.VolumeName = name
		rp.Spec.NodeID = g.node("", 0)
		if g.pct(85) {
			rp.Spec.EngineName = engNames[g.r.IntN(len(engNames))]
		} else {
			rp.Spec.EngineName = name + "-e-gone"
		}
		rp.Spec.Active = g.pct(60)
		rp.Status.CurrentState = longhorn.StateRunning
		if g.pct(10) {
			ts := metav1.NewTime(t0.Add(-time.Minute))
			rp.DeletionTimestamp = &ts
		}
		st.Replicas = append(st.Replicas, rp)
	}
}

// nearStuck builds the #6642 state and then changes a few random
// fields, so that the acting rows and their refusals are reached often.
func (g gen) nearStuck(st *longhorn.State, name string, names map[string]bool) {
	const a, b = "node-a", "node-b"
	v := longhorn.Volume{}
	v.Name = name
	v.Spec = longhorn.VolumeSpec{NodeID: b, Migratable: true, AccessMode: longhorn.AccessModeRWX, EngineImage: "img-1"}
	v.Status = longhorn.VolumeStatus{State: longhorn.VolumeStateAttached, Robustness: longhorn.RobustnessHealthy, CurrentNodeID: b, CurrentImage: "img-1"}
	if st.Version.Class() == longhorn.ClassL15a && g.pct(80) {
		v.Status.CurrentMigrationNodeID = b
	}
	oldName, newName := name+"-e-"+g.hex8(false), name+"-e-"+g.hex8(false)
	if g.pct(50) {
		oldName, newName = name+"-e-0", name+"-e-1"
	}
	mk := func(n, node string, created time.Duration, reps ...string) longhorn.Engine {
		e := longhorn.Engine{}
		e.Name = n
		e.CreationTimestamp = metav1.NewTime(t0.Add(-created))
		e.Spec = longhorn.EngineSpec{VolumeName: name, NodeID: node, Active: true, DesireState: longhorn.StateRunning}
		e.Status = longhorn.EngineStatus{OwnerID: node, CurrentState: longhorn.StateRunning, Endpoint: "/dev/longhorn/" + name,
			ReplicaModeMap: map[string]string{}}
		for _, r := range reps {
			e.Status.ReplicaModeMap[r] = longhorn.ModeRW
		}
		return e
	}
	oldE := mk(oldName, a, time.Hour, name+"-r-a1", name+"-r-a2")
	newE := mk(newName, b, 10*time.Minute, name+"-r-b1", name+"-r-b2")
	var reps []longhorn.Replica
	for _, r := range []struct {
		n, eng string
		active bool
	}{{name + "-r-a1", oldName, true}, {name + "-r-a2", oldName, true}, {name + "-r-b1", newName, false}, {name + "-r-b2", newName, false}} {
		rp := longhorn.Replica{}
		rp.Name = r.n
		rp.Spec = longhorn.ReplicaSpec{VolumeName: name, EngineName: r.eng, Active: r.active, NodeID: g.node("", 0)}
		reps = append(reps, rp)
	}
	engs := []*longhorn.Engine{&oldE, &newE}
	var extra []longhorn.Engine
	mutations := []func(){
		func() { v.Spec.NodeID = g.node("", 0) },
		func() { v.Status.CurrentNodeID = g.node("", 0) },
		func() { v.Spec.MigrationNodeID = g.node("", 0) },
		func() { v.Status.CurrentMigrationNodeID = g.node(v.Status.CurrentNodeID, 40) },
		func() {
			v.Status.Robustness = g.pick(longhorn.RobustnessDegraded, longhorn.RobustnessFaulted, longhorn.RobustnessUnknown, "")
		},
		func() { v.Status.CurrentImage = g.pick("img-2", "") },
		func() { v.Spec.Image = g.pick("img-1", "img-2") },
		func() {
			v.Spec.DataEngine = longhorn.DataEngineV2
			v.Status.CurrentEngineNodeID = g.node("", 0)
		},
		func() { v.Status.SwitchoverState = "preparing" },
		func() {
			e := engs[g.r.IntN(2)]
			e.Status.CurrentState = g.pick(longhorn.StateStopped, longhorn.StateError, longhorn.StateStarting, "")
		},
		func() { engs[g.r.IntN(2)].Status.Endpoint = "" },
		func() {
			for r := range newE.Status.ReplicaModeMap {
				newE.Status.ReplicaModeMap[r] = g.pick(longhorn.ModeWO, longhorn.ModeERR, longhorn.ModeRW)
			}
		},
		func() {
			ts := metav1.NewTime(t0.Add(-time.Duration(g.r.IntN(30)) * time.Minute))
			engs[g.r.IntN(2)].DeletionTimestamp = &ts
		},
		func() { engs[g.r.IntN(2)].Spec.Active = false },
		func() { engs[g.r.IntN(2)].Spec.NodeID = g.node("", 0) },
		func() { engs[g.r.IntN(2)].CreationTimestamp = metav1.NewTime(t0) },
		func() {
			e := mk(fmt.Sprintf("%s-e-%d", name, 2+g.r.IntN(3)), g.node("", 0), time.Duration(g.r.IntN(90))*time.Minute, name+"-r-a1")
			e.Spec.Active = g.pct(60)
			if g.pct(20) {
				ts := metav1.NewTime(t0.Add(-time.Minute))
				e.DeletionTimestamp = &ts
			}
			extra = append(extra, e)
		},
		func() {
			for i := range reps {
				reps[i].Spec.Active = !reps[i].Spec.Active
			}
		},
		func() { reps = reps[:2] },
		// non-migratable volumes, an attach pending, no currentMigrationNodeID
		func() { v.Spec.Migratable = false },
		func() { v.Spec.AccessMode = longhorn.AccessModeRWO },
		func() { v.Status.PendingNodeID = g.node(v.Status.CurrentNodeID, 40) },
		func() { v.Status.CurrentMigrationNodeID = "" },
		// an interrupted run: some replica flags already set right
		func() {
			for i := range reps {
				if g.pct(50) {
					reps[i].Spec.Active = reps[i].Spec.EngineName == newName
				}
			}
		},
		func() {
			ts := metav1.NewTime(t0.Add(-time.Minute))
			reps[g.r.IntN(len(reps))].DeletionTimestamp = &ts
		},
	}
	// The documented delete applied by hand: the stale engine is gone, the
	// survivor's replicas inactive or already cleaned up; sometimes a run
	// repointed some of the stale ones already.
	kb := g.pct(12)
	if kb {
		if g.pct(50) {
			reps = reps[:2]
		}
		for i := range reps {
			if reps[i].Spec.EngineName == oldName && g.pct(25) {
				reps[i].Spec.EngineName = newName
			}
		}
	}
	for _, m := range mutations {
		if g.pct(8) {
			m()
		}
	}
	st.Volumes = append(st.Volumes, v)
	all := append([]longhorn.Engine{oldE, newE}, extra...)
	if kb {
		all = append([]longhorn.Engine{newE}, extra...)
	}
	for _, e := range all {
		if names[e.Name] {
			continue
		}
		names[e.Name] = true
		st.Engines = append(st.Engines, e)
	}
	for _, r := range reps {
		names[r.Name] = true
	}
	st.Replicas = append(st.Replicas, reps...)
}

// shuffled returns a copy of st with every slice in a random order.
func shuffled(r *rand.Rand, st *longhorn.State) *longhorn.State {
	c := *st
	c.Volumes = append([]longhorn.Volume(nil), st.Volumes...)
	c.Engines = append([]longhorn.Engine(nil), st.Engines...)
	c.Replicas = append([]longhorn.Replica(nil), st.Replicas...)
	c.InstanceManagers = append([]longhorn.InstanceManager(nil), st.InstanceManagers...)
	r.Shuffle(len(c.Volumes), func(i, j int) { c.Volumes[i], c.Volumes[j] = c.Volumes[j], c.Volumes[i] })
	r.Shuffle(len(c.Engines), func(i, j int) { c.Engines[i], c.Engines[j] = c.Engines[j], c.Engines[i] })
	r.Shuffle(len(c.Replicas), func(i, j int) { c.Replicas[i], c.Replicas[j] = c.Replicas[j], c.Replicas[i] })
	r.Shuffle(len(c.InstanceManagers), func(i, j int) {
		c.InstanceManagers[i], c.InstanceManagers[j] = c.InstanceManagers[j], c.InstanceManagers[i]
	})
	return &c
}

func TestClassifyProperties(t *testing.T) {
	iterations := 10000
	if testing.Short() {
		iterations = 1000
	}
	// PROPERTY_SEED=<n> explores another part of the space; failures print
	// the seed and iteration.
	seed := uint64(6642)
	if env := os.Getenv("PROPERTY_SEED"); env != "" {
		n, err := strconv.ParseUint(env, 10, 64)
		if err != nil {
			t.Fatalf("PROPERTY_SEED=%q: %v", env, err)
		}
		seed = n
	}
	r := rand.New(rand.NewPCG(seed, 1))
	g := gen{r}
	counts := map[findingRow]int{}
	for i := 0; i < iterations; i++ {
		st := g.state()
		before := mustJSON(st)
		res := Classify(st, Options{})
		if i%10 == 0 && mustJSON(st) != before {
			t.Fatalf("iteration %d: Classify modified its input", i)
		}
		ctx := func() string {
			return fmt.Sprintf("iteration %d (seed %d)\nstate: %s\nresult: %s", i, seed, before, mustJSON(res))
		}

		// Deterministic.
		if again := Classify(st, Options{}); !reflect.DeepEqual(res, again) {
			t.Fatalf("not deterministic: %s\nsecond: %s", ctx(), mustJSON(again))
		}
		// Independent of the order of the lists.
		for k := 0; k < 3; k++ {
			sh := shuffled(r, st)
			if other := Classify(sh, Options{}); !reflect.DeepEqual(res, other) {
				t.Fatalf("depends on list order: %s\nshuffled state: %s\nshuffled result: %s", ctx(), mustJSON(sh), mustJSON(other))
			}
		}

		checkResult(t, st, res, ctx)
		for _, f := range res.Findings {
			counts[findingRow{f.Type, f.Action}]++
		}
	}
	// The generator must reach the interesting rows, or the test proves little.
	for _, k := range []findingRow{
		{TypeMultipleActiveEngines, ActionDeactivate},
		{TypeMultipleActiveEngines, ActionDelete},
		{TypeMultipleActiveEngines, ActionNone},
		{TypePendingCleanup, ActionWait},
		{TypeMigrationInFlight, ActionNone},
		{TypeMigrationFinishing, ActionWait},
		{TypePendingCleanup, ActionSetReplicas},
		{TypeDanglingReplicas, ActionSetReplicas},
		{TypeDanglingReplicas, ActionNone},
		{TypeNoActiveEngine, ActionNone},
		{TypeOrphanEngine, ActionNone},
		{TypeOrphanEngineProcess, ActionNone},
	} {
		if counts[k] == 0 {
			t.Errorf("generator never produced %s; counts %v", k, counts)
		}
	}
	t.Logf("finding counts over %d states: %v", iterations, counts)
}

// findingRow is a finding's type and action, the row the generator must reach.
type findingRow struct {
	typ    Type
	action Action
}

func (r findingRow) String() string { return string(r.typ) + "/" + string(r.action) }

func checkResult(t *testing.T, st *longhorn.State, res Result, ctx func() string) {
	t.Helper()
	vols := map[string]*longhorn.Volume{}
	for i := range st.Volumes {
		vols[st.Volumes[i].Name] = &st.Volumes[i]
	}
	perVolume := 0
	attention := false
	for i, f := range res.Findings {
		if i > 0 && res.Findings[i-1].Volume > f.Volume {
			t.Fatalf("findings not ordered by volume: %s", ctx())
		}
		attention = attention || f.Severity == SeverityWarning || f.Severity == SeverityCritical
		if f.Stale == nil {
			t.Fatalf("%s: Stale is nil (JSON null): %s", f.Volume, ctx())
		}
		for _, s := range f.Stale {
			if s == f.Keep {
				t.Fatalf("%s: Keep %q is also stale: %s", f.Volume, s, ctx())
			}
		}
		switch f.Type {
		case TypeOrphanEngine, TypeOrphanEngineProcess:
			if f.Action != ActionNone {
				t.Fatalf("orphan with action %s: %s", f.Action, ctx())
			}
			continue
		}
		v := vols[f.Volume]
		if v == nil {
			t.Fatalf("finding for unknown volume %q: %s", f.Volume, ctx())
		}
		perVolume++
		checkFinding(t, st, v, f, ctx)
		// ClassifyVolume is what fix calls right before acting.
		g, ok := ClassifyVolume(st, f.Volume, Options{})
		if !ok || !reflect.DeepEqual(f, g) {
			t.Fatalf("ClassifyVolume(%s) = %t %s: %s", f.Volume, ok, mustJSON(g), ctx())
		}
	}
	if res.Volumes != len(st.Volumes) || res.Healthy+perVolume != res.Volumes {
		t.Fatalf("Volumes=%d Healthy=%d volume findings=%d: %s", res.Volumes, res.Healthy, perVolume, ctx())
	}
	if res.NeedsAttention() != attention {
		t.Fatalf("NeedsAttention()=%t: %s", res.NeedsAttention(), ctx())
	}
}

func checkFinding(t *testing.T, st *longhorn.State, v *longhorn.Volume, f Finding, ctx func() string) {
	t.Helper()
	engines := map[string]*longhorn.Engine{}
	for _, e := range st.EnginesOf(v.Name) {
		engines[e.Name] = e
	}
	// Roles in the evidence match Keep and Stale.
	for _, ee := range f.Evidence.Engines {
		if engines[ee.Name] == nil {
			t.Fatalf("%s: evidence names engine %s of another volume: %s", v.Name, ee.Name, ctx())
		}
		if (ee.Role == "keep") != (f.Keep != "" && ee.Name == f.Keep) {
			t.Fatalf("%s: engine %s role %q, Keep %q: %s", v.Name, ee.Name, ee.Role, f.Keep, ctx())
		}
		if f.Type == TypeMultipleActiveEngines && (ee.Role == "stale") != contains(f.Stale, ee.Name) {
			t.Fatalf("%s: engine %s role %q, Stale %v: %s", v.Name, ee.Name, ee.Role, f.Stale, ctx())
		}
	}
	if len(f.Evidence.Engines) != len(engines) {
		t.Fatalf("%s: evidence has %d engines, volume has %d: %s", v.Name, len(f.Evidence.Engines), len(engines), ctx())
	}
	if f.Keep != "" && engines[f.Keep] == nil {
		t.Fatalf("%s: Keep %s is not an engine of the volume: %s", v.Name, f.Keep, ctx())
	}

	refused := f.Refused()
	acting := f.Action.Writes()
	if refused && acting {
		t.Fatalf("%s: action %s with a failed precondition: %s", v.Name, f.Action, ctx())
	}
	if !acting {
		if len(f.ReplicaChanges) > 0 {
			t.Fatalf("%s: replica changes without an action: %s", v.Name, ctx())
		}
		return
	}

	cls := st.Version.Class()
	switch {
	case f.Type == TypeMultipleActiveEngines && f.Action == ActionDeactivate:
	case f.Type == TypeMultipleActiveEngines && f.Action == ActionDelete:
		// only where Longhorn re-enters the confirm once the engine is gone
		if cls != longhorn.ClassL15a || v.Status.CurrentMigrationNodeID != v.Status.CurrentNodeID {
			t.Fatalf("%s: delete on %s with currentMigrationNodeID %q: %s", v.Name, cls, v.Status.CurrentMigrationNodeID, ctx())
		}
	case (f.Type == TypePendingCleanup || f.Type == TypeDanglingReplicas) && f.Action == ActionSetReplicas:
	default:
		t.Fatalf("%s: action %s on type %s: %s", v.Name, f.Action, f.Type, ctx())
	}
	switch {
	case cls == longhorn.ClassL13 || cls == longhorn.ClassL14a || cls == longhorn.ClassL15a:
	case cls.Fixed() && !st.Version.AtLeast(1, 13, 0) && v.DataEngineName() == longhorn.DataEngineV1:
	default:
		t.Fatalf("%s: action %s on %s (%s, %s): %s", v.Name, f.Action, st.Version, cls, v.DataEngineName(), ctx())
	}
	if len(f.Preconditions) == 0 {
		t.Fatalf("%s: acting without preconditions: %s", v.Name, ctx())
	}
	for _, c := range f.Preconditions {
		if !c.OK {
			t.Fatalf("%s: acting although %q failed: %s", v.Name, c.Name, ctx())
		}
	}
	// The preconditions directly on the objects, independent of the Check list.
	// A migration request may stand only beside two active engines and
	// no engine for it (it waits on the repair).
	requestWaits := f.Type == TypeMultipleActiveEngines
	for _, e := range engines {
		requestWaits = requestWaits && e.Spec.Active && e.Spec.NodeID != v.Spec.MigrationNodeID
	}
	if (v.Spec.MigrationNodeID != "" && !requestWaits) || v.Status.CurrentNodeID == "" || v.Spec.NodeID != v.Status.CurrentNodeID || v.UpgradePending() {
		t.Fatalf("%s: acting on a volume that is migrating, not attached where it runs, or upgrading: %s", v.Name, ctx())
	}
	if pn := v.Status.PendingNodeID; pn != "" && pn != v.Status.CurrentNodeID {
		t.Fatalf("%s: acting with pendingNodeID %q: %s", v.Name, pn, ctx())
	}
	if cm := v.Status.CurrentMigrationNodeID; cm != "" && !(st.Version.HasCurrentMigrationNodeID() && cm == v.Status.CurrentNodeID && f.Type != TypeDanglingReplicas) {
		t.Fatalf("%s: acting with currentMigrationNodeID %q: %s", v.Name, cm, ctx())
	}
	keep := engines[f.Keep]
	if keep == nil {
		t.Fatalf("%s: acting without a Keep engine: %s", v.Name, ctx())
	}
	if keep.Spec.NodeID != v.Status.CurrentNodeID || !keep.IsActive() {
		t.Fatalf("%s: Keep %s on %q active=%t deleting=%t, volume currentNodeID %q: %s", v.Name, keep.Name, keep.Spec.NodeID, keep.Spec.Active, keep.Deleting(), v.Status.CurrentNodeID, ctx())
	}
	replicas := st.ReplicasOf(v.Name)
	checkReplicaChanges(t, st, v, f, engines, replicas, ctx)
	if f.Type == TypeDanglingReplicas {
		return
	}

	// Engine-level rows: processMigration must run after the write.
	if !v.Spec.Migratable || v.Spec.AccessMode != longhorn.AccessModeRWX {
		t.Fatalf("%s: acting on a volume processMigration skips: %s", v.Name, ctx())
	}
	if keep.Status.CurrentState != longhorn.StateRunning || keep.Status.Endpoint == "" {
		t.Fatalf("%s: Keep %s not running with an endpoint: %s", v.Name, keep.Name, ctx())
	}
	rw := 0
	for _, r := range replicas {
		if r.Spec.EngineName == keep.Name && keep.Status.ReplicaModeMap[r.Name] == longhorn.ModeRW {
			rw++
		}
	}
	if rw == 0 {
		t.Fatalf("%s: Keep %s has no RW replica of its own: Longhorn would not recompute robustness as usable: %s", v.Name, keep.Name, ctx())
	}
	onCurrent := 0
	active := 0
	for _, e := range engines {
		if e.Spec.NodeID == v.Status.CurrentNodeID {
			onCurrent++
		}
		if e.IsActive() {
			active++
		}
	}
	if onCurrent != 1 {
		t.Fatalf("%s: %d engines on the current node: %s", v.Name, onCurrent, ctx())
	}
	if f.Type == TypeMultipleActiveEngines && (len(f.Stale) == 0 || len(f.Stale) != active-1) {
		t.Fatalf("%s: Stale %v with %d active engines: %s", v.Name, f.Stale, active, ctx())
	}
	for _, s := range f.Stale {
		e := engines[s]
		if e == nil {
			t.Fatalf("%s: stale %s is not an engine of the volume: %s", v.Name, s, ctx())
		}
		if !e.IsActive() || e.Deleting() || e.Spec.NodeID == v.Status.CurrentNodeID {
			t.Fatalf("%s: stale %s active=%t deleting=%t node %q: %s", v.Name, s, e.Spec.Active, e.Deleting(), e.Spec.NodeID, ctx())
		}
	}
	if !strings.Contains(f.Reason, f.Keep) {
		t.Fatalf("%s: reason does not name Keep: %s", v.Name, ctx())
	}
}

// checkReplicaChanges is the safety property of every repair: once its
// replica writes are applied (and, for the engine rows, the stale engines
// deactivated or deleted), every replica Longhorn's clean-up or a migration
// revert may delete, i.e. every replica not naming Keep, is inactive; no
// write touches a replica being deleted; a stop after any write is safe
// (prefixHazard); and no
// replica of Keep is deactivated.
func checkReplicaChanges(t *testing.T, st *longhorn.State, v *longhorn.Volume, f Finding, engines map[string]*longhorn.Engine, replicas []*longhorn.Replica, ctx func() string) {
	t.Helper()
	byName := map[string]longhorn.Replica{}
	for _, r := range replicas {
		byName[r.Name] = *r
	}
	if f.Type != TypeDanglingReplicas {
		if h := prefixHazard(st.Version, f.Keep, replicas, f.ReplicaChanges); h != "" {
			t.Fatalf("%s: a stop between the replica writes is unsafe: %s: %s", v.Name, h, ctx())
		}
	}
	for _, c := range f.ReplicaChanges {
		r, ok := byName[c.Replica]
		if !ok {
			t.Fatalf("%s: change for unknown replica %s: %s", v.Name, c.Replica, ctx())
		}
		if r.DeletionTimestamp != nil {
			t.Fatalf("%s: change for replica %s being deleted: %s", v.Name, c.Replica, ctx())
		}
		if r.Spec.EngineName != c.FromEngine || r.Spec.Active != c.FromActive {
			t.Fatalf("%s: change %+v does not start from the replica as read: %s", v.Name, c, ctx())
		}
		if c.FromEngine == f.Keep && !c.ToActive {
			t.Fatalf("%s: replica %s of Keep deactivated: %s", v.Name, c.Replica, ctx())
		}
		r.Spec.EngineName, r.Spec.Active = c.ToEngine, c.ToActive
		byName[c.Replica] = r
	}
	activeOnKeep := 0
	for _, r := range byName {
		if r.Spec.Active && r.Spec.EngineName != f.Keep {
			t.Fatalf("%s: after the repair replica %s stays active for %s, which Longhorn may delete with its data: %s", v.Name, r.Name, r.Spec.EngineName, ctx())
		}
		if r.Spec.Active {
			activeOnKeep++
		}
		if f.Type == TypeMultipleActiveEngines && r.Spec.EngineName == f.Keep && !r.Spec.Active && r.DeletionTimestamp == nil {
			t.Fatalf("%s: after the repair replica %s of Keep stays inactive: %s", v.Name, r.Name, ctx())
		}
	}
	if activeOnKeep == 0 {
		t.Fatalf("%s: after the repair no replica is active: %s", v.Name, ctx())
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
