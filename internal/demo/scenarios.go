// Package demo drives the Longhorn simulator into the named states a person
// (or a test) wants to see: each scenario is reached the way it happens on a
// real cluster — attach, migrate, confirm with an injected fault — rather
// than by writing the end state directly.
package demo

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Nodes every scenario uses: volumes start on NodeA and migrate to NodeB.
const (
	NodeA = "node-a"
	NodeB = "node-b"
	NodeC = "node-c"
)

// Scenario is one named volume state.
type Scenario struct {
	Name        string
	Description string
	run         func(ctx context.Context, e *Env, vol string) error
}

// Scenarios lists every scenario in the order the demo builds them.
var Scenarios = []Scenario{
	{"healthy", "rwo volume attached to node-a", healthy},
	{"idle-migratable", "migratable rwx volume attached to node-a, no migration", idleMigratable},
	{"mid-migration", "live migration node-a → node-b started, migration engine ready, not confirmed", midMigration},
	{"two-active-engines", "the #6642 bug: confirm whose old-engine delete failed (injected) left two active engines", twoActive},
	{"pending-cleanup", "confirmed migration whose old engine waits for its finalizer (injected: never removed)", pendingCleanup},
	{"issue-4827", "two active engines with spec.nodeID emptied afterwards (longhorn#4827): no safe repair", issue4827},
}

// Names lists the scenario names.
func Names() []string {
	out := make([]string, len(Scenarios))
	for i, s := range Scenarios {
		out[i] = s.Name
	}
	return out
}

// Select returns the named scenarios ("all" or empty for every one).
func Select(names []string) ([]Scenario, error) {
	if len(names) == 0 || (len(names) == 1 && names[0] == "all") {
		return Scenarios, nil
	}
	var out []Scenario
	for _, n := range names {
		found := false
		for _, s := range Scenarios {
			if s.Name == n {
				out = append(out, s)
				found = true
			}
		}
		if !found {
			known := Names()
			sort.Strings(known)
			return nil, fmt.Errorf("unknown scenario %q (have %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// AddNodes creates the three demo nodes.
func AddNodes(ctx context.Context, s *lhsim.Sim) error {
	for _, n := range []string{NodeA, NodeB, NodeC} {
		if err := s.AddNode(ctx, n, lhsim.NodeOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// Env is what scenarios act through: the simulator (Longhorn and its CSI
// driver) and a client for the edits a person would make by hand.
type Env struct {
	Sim     *lhsim.Sim
	Dynamic dynamic.Interface
}

// Build runs a scenario: the volume is named after it unless vol is given.
func Build(ctx context.Context, e *Env, sc Scenario, vol string) error {
	if vol == "" {
		vol = sc.Name
	}
	if err := sc.run(ctx, e, vol); err != nil {
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

func create(ctx context.Context, s *lhsim.Sim, vol string, migratable bool) error {
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

func healthy(ctx context.Context, e *Env, vol string) error { return create(ctx, e.Sim, vol, false) }

func idleMigratable(ctx context.Context, e *Env, vol string) error {
	return create(ctx, e.Sim, vol, true)
}

func midMigration(ctx context.Context, e *Env, vol string) error {
	s := e.Sim
	if err := create(ctx, s, vol, true); err != nil {
		return err
	}
	if err := s.Attach(ctx, vol, NodeB); err != nil {
		return err
	}
	return s.WaitFor(ctx, vol, migrationReady(NodeB))
}

// twoActive is the seed's sequence: attach on A, migrate to B, wait for the
// migration engine, confirm while the old engine's deletion fails once.
func twoActive(ctx context.Context, e *Env, vol string) error {
	s := e.Sim
	if err := midMigration(ctx, e, vol); err != nil {
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

func pendingCleanup(ctx context.Context, e *Env, vol string) error {
	s := e.Sim
	if err := midMigration(ctx, e, vol); err != nil {
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

// issue4827 empties spec.nodeID of a stuck volume, as happened in
// longhorn#4827: every sync fails, so Longhorn never acts on it.
func issue4827(ctx context.Context, e *Env, vol string) error {
	s := e.Sim
	if !s.Version().Affected() {
		return fmt.Errorf("needs a release with the #6642 bug, not %s", s.Version())
	}
	if err := twoActive(ctx, e, vol); err != nil {
		return err
	}
	patch := []byte(`{"spec":{"nodeID":""}}`)
	_, err := e.Dynamic.Resource(longhorn.Volumes.GVR()).Namespace(s.Namespace()).Patch(ctx, vol, types.MergePatchType, patch, metaPatch())
	return err
}
