package testenv

import (
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Checks on one volume's state that the tests share: the conditions they
// wait for and the lookups they make in an engine list.

// VolumeCheck is a condition on a volume, its engines and its replicas, as
// lhsim's WaitFor and Env.WaitFor take it.
type VolumeCheck = func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool

// Settled: exactly one engine, active, running on node and not deleting,
// every replica serving it, active and not deleting, the volume attached
// there with no migration left. It is what a finished repair or migration
// leaves, checked independently of the commands' own verification.
func Settled(node string) VolumeCheck {
	return func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		if len(es) != 1 || !es[0].Spec.Active || es[0].Spec.NodeID != node || es[0].Status.CurrentState != longhorn.StateRunning ||
			es[0].DeletionTimestamp != nil {
			return false
		}
		if v.Spec.NodeID != node || v.Status.CurrentNodeID != node || v.Spec.MigrationNodeID != "" ||
			v.Status.CurrentMigrationNodeID != "" || v.Status.State != longhorn.VolumeStateAttached || len(rs) == 0 {
			return false
		}
		for _, r := range rs {
			if r.Spec.EngineName != es[0].Name || !r.Spec.Active || r.DeletionTimestamp != nil {
				return false
			}
		}
		return true
	}
}

// MigrationReady: a live migration to NodeB whose migration engine runs
// inactive beside the active old engine on NodeA, with as many RW replicas,
// the clones created (four replicas).
func MigrationReady(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
	if v.Spec.MigrationNodeID != NodeB || len(es) != 2 {
		return false
	}
	old, mig := EngineOn(es, NodeA), EngineOn(es, NodeB)
	if old == nil || mig == nil || !old.Spec.Active || mig.Spec.Active {
		return false
	}
	if mig.Status.CurrentState != longhorn.StateRunning || mig.Status.Endpoint == "" || mig.RWCount() != old.RWCount() ||
		mig.RWCount() == 0 {
		return false
	}
	return len(rs) == 4
}

// TwoActiveOnB is the #6642 state as the seed sequence leaves it: two
// engines, both active and not deleting, the volume's current node NodeB.
func TwoActiveOnB(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
	n := 0
	for i := range es {
		if es[i].IsActive() {
			n++
		}
	}
	return len(es) == 2 && n == 2 && v.Status.CurrentNodeID == NodeB
}

// EngineOn is the first engine on node, or nil.
func EngineOn(es []longhorn.Engine, node string) *longhorn.Engine {
	for i := range es {
		if es[i].Spec.NodeID == node {
			return &es[i]
		}
	}
	return nil
}

// EngineNamed is the engine called name, or nil.
func EngineNamed(es []longhorn.Engine, name string) *longhorn.Engine {
	for i := range es {
		if es[i].Name == name {
			return &es[i]
		}
	}
	return nil
}

// ActiveCount counts the engines with spec.active set, deleting or not.
func ActiveCount(es []longhorn.Engine) int {
	n := 0
	for _, e := range es {
		if e.Spec.Active {
			n++
		}
	}
	return n
}
