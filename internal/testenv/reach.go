package testenv

// Reach drives the Longhorn simulator into a scenario's state the way it
// happens on a real cluster — attach, migrate, confirm with an injected fault
// — rather than by writing the end state directly. `make demo` and the
// simulator tests reach their volumes this way.

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// AddNodes creates the three demo nodes.
func AddNodes(ctx context.Context, s *lhsim.Sim) error {
	for _, n := range []string{NodeA, NodeB, NodeC} {
		if err := s.AddNode(ctx, n, lhsim.NodeOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// SimCluster is what scenarios are reached through: the simulator (Longhorn
// and its CSI driver) and a client for the edits a person would make by hand.
type SimCluster struct {
	Sim     *lhsim.Sim
	Dynamic dynamic.Interface
}

// Reach drives the simulator into a scenario's state: the volume is named
// after it unless vol is given.
func Reach(ctx context.Context, c *SimCluster, sc Scenario, vol string) error {
	if vol == "" {
		vol = sc.Name
	}
	if err := sc.reach(ctx, c, vol); err != nil {
		return fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return nil
}

func attached(node string) func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool {
	return func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		return v.Status.State == longhorn.VolumeStateAttached && v.Status.CurrentNodeID == node && countActive(es) == 1 &&
			len(es) == 1 && es[0].Status.CurrentState == longhorn.StateRunning
	}
}

func migrationReady(node string) func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool {
	return func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		for _, e := range es {
			if !e.Spec.Active && e.Spec.NodeID == node && e.Status.CurrentState == longhorn.StateRunning && e.Status.Endpoint != "" {
				return v.Spec.MigrationNodeID == node
			}
		}
		return false
	}
}

func countActive(es []longhorn.Engine) int {
	n := 0
	for i := range es {
		if es[i].Spec.Active && es[i].DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func createAttached(ctx context.Context, s *lhsim.Sim, vol string, migratable bool) error {
	if err := s.CreateVolume(ctx, vol, lhsim.VolumeOptions{Migratable: migratable, ReplicaNodes: []string{NodeA, NodeC}}); err != nil {
		return err
	}
	// As on a real cluster, the volume can be attached once it is detached.
	err := s.WaitFor(ctx, vol, func(v *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return v.Status.State == longhorn.VolumeStateDetached
	})
	if err != nil {
		return err
	}
	if err := s.Attach(ctx, vol, NodeA); err != nil {
		return err
	}
	return s.WaitFor(ctx, vol, attached(NodeA))
}

func reachHealthy(ctx context.Context, e *SimCluster, vol string) error {
	return createAttached(ctx, e.Sim, vol, false)
}

func reachIdleMigratable(ctx context.Context, e *SimCluster, vol string) error {
	return createAttached(ctx, e.Sim, vol, true)
}

func reachMidMigration(ctx context.Context, e *SimCluster, vol string) error {
	s := e.Sim
	if err := createAttached(ctx, s, vol, true); err != nil {
		return err
	}
	if err := s.Attach(ctx, vol, NodeB); err != nil {
		return err
	}
	return s.WaitFor(ctx, vol, migrationReady(NodeB))
}

// reachTwoActive is the seed's sequence: attach on A, migrate to B, wait for the
// migration engine, confirm while the old engine's deletion fails once.
func reachTwoActive(ctx context.Context, e *SimCluster, vol string) error {
	s := e.Sim
	if err := reachMidMigration(ctx, e, vol); err != nil {
		return err
	}
	s.Inject(lhsim.Fault{Kind: lhsim.FailEngineDelete, Volume: vol, Engine: lhsim.RoleOld, Times: 1})
	if err := s.Detach(ctx, vol, NodeA); err != nil {
		return err
	}
	if s.Version().Affected() {
		return s.WaitFor(ctx, vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return countActive(es) >= 2 && v.Status.CurrentNodeID == NodeB
		})
	}
	// Fixed releases retry the delete and finish cleanly.
	return s.WaitFor(ctx, vol, attached(NodeB))
}

func reachPendingCleanup(ctx context.Context, e *SimCluster, vol string) error {
	s := e.Sim
	if err := reachMidMigration(ctx, e, vol); err != nil {
		return err
	}
	s.Inject(lhsim.Fault{Kind: lhsim.FinalizerStuck, Volume: vol, Engine: lhsim.RoleOld})
	if err := s.Detach(ctx, vol, NodeA); err != nil {
		return err
	}
	return s.WaitFor(ctx, vol, func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		for _, e := range es {
			if e.DeletionTimestamp != nil && e.Spec.NodeID == NodeA {
				return v.Status.CurrentNodeID == NodeB
			}
		}
		return false
	})
}

// reachIssue4827 empties spec.nodeID of a stuck volume, as happened in
// longhorn#4827: every sync fails, so Longhorn never acts on it.
func reachIssue4827(ctx context.Context, e *SimCluster, vol string) error {
	s := e.Sim
	if !s.Version().Affected() {
		return fmt.Errorf("needs a release with the #6642 bug, not %s", s.Version())
	}
	if err := reachTwoActive(ctx, e, vol); err != nil {
		return err
	}
	patch := []byte(`{"spec":{"nodeID":""}}`)
	_, err := e.Dynamic.Resource(longhorn.Volumes.GVR()).Namespace(s.Namespace()).Patch(ctx, vol, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "longhorn-sim-demo"})
	return err
}

// StartScenarioSim runs a simulator of version in namespace ns (empty:
// Longhorn's default) with the scenario nodes, until the test ends.
func StartScenarioSim(ctx context.Context, t testing.TB, cfg *rest.Config, ns, version string) *lhsim.Sim {
	t.Helper()
	sim, err := lhsim.New(cfg, lhsim.Options{Namespace: ns, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Stop)
	if err := AddNodes(ctx, sim); err != nil {
		t.Fatal(err)
	}
	return sim
}

// ReachAll reaches each of scs, every volume named after its scenario.
func ReachAll(ctx context.Context, c *SimCluster, scs []Scenario) error {
	for _, sc := range scs {
		if err := Reach(ctx, c, sc, ""); err != nil {
			return err
		}
	}
	return nil
}
