package testenv

import (
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The steps of the seed sequence that produces #6642 — attach on node-a,
// migrate to node-b, confirm while the old engine cannot be deleted — for
// tests that need to act between them. Reach runs the same sequence whole
// for the demo.

// BugError is the volume controller's sync error in the #6642 state.
const BugError = "BUG: found the second active engine"

// CreateAttached creates a migratable volume with a replica on node-a and
// node-b, attaches it to node-a the way the CSI driver would, and waits
// until it is settled there and healthy.
func (e *Env) CreateAttached(vol string) {
	e.T.Helper()
	if err := e.Sim.CreateVolume(e.Ctx, vol, lhsim.VolumeOptions{Migratable: true, ReplicaNodes: []string{NodeA, NodeB}}); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("volume created detached", vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		return v.Status.State == longhorn.VolumeStateDetached && len(es) == 1 && len(rs) == 2
	})
	if err := e.Sim.Attach(e.Ctx, vol, NodeA); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("attached to node-a", vol, Settled(NodeA))
	e.WaitFor("healthy", vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Status.Robustness == longhorn.RobustnessHealthy
	})
}

// StartMigration attaches the volume to node-b too (what CSI does for a
// live migration), waits until the migration engine is ready and, on 1.5
// and later, node-b's ticket satisfied; it returns the engines' names.
func (e *Env) StartMigration(vol string) (old, mig string) {
	e.T.Helper()
	if err := e.Sim.Attach(e.Ctx, vol, NodeB); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("migration engine ready", vol, MigrationReady)
	if e.Sim.Version().HasVolumeAttachments() {
		id := longhorn.CSITicketID(vol, NodeB)
		e.Await("node-b ticket satisfied", func() bool {
			va, err := e.Sim.VolumeAttachment(e.Ctx, vol)
			return err == nil && va.Satisfied(id)
		})
	}
	_, es, _ := e.State(vol)
	return EngineOn(es, NodeA).Name, EngineOn(es, NodeB).Name
}

// Confirm confirms the migration as CSI does (detaches node-a) and waits
// until the volume is settled on node-b.
func (e *Env) Confirm(vol string) {
	e.T.Helper()
	if err := e.Sim.Detach(e.Ctx, vol, NodeA); err != nil {
		e.T.Fatal(err)
	}
	e.WaitFor("confirmed on node-b", vol, Settled(NodeB))
}

// WaitStuck waits for the #6642 state: two active engines, the volume on
// node-b, and the volume controller failing every sync with the BUG error.
func (e *Env) WaitStuck(vol string) {
	e.T.Helper()
	e.WaitFor("two active engines", vol, TwoActiveOnB)
	e.Await("BUG sync error", func() bool { return strings.Contains(e.Sim.LastSyncError(vol), BugError) })
}
