package fix

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// genVersions are the releases random states are drawn on.
var genVersions = []string{"v1.3.2", "v1.4.3", "v1.4.4", "v1.5.1", "v1.5.2", "v1.5.3", "v1.6.0", "v1.10.0", "v1.11.0", "v1.12.1", "v1.13.0"}

// mutation breaks (or not) one thing of a #6642 state; most break a
// precondition of the repair, some leave the repair safe.
type mutation func(rng *rand.Rand, o *testenv.Objects)

var mutations = []mutation{
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Spec.NodeID = "" },                     // longhorn#4827
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Status.CurrentNodeID = testenv.NodeA }, // status conflict
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Status.CurrentNodeID = "" },
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Spec.MigrationNodeID = testenv.NodeA },
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Status.CurrentMigrationNodeID = testenv.NodeA },
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Status.CurrentMigrationNodeID = "" },
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Status.Robustness = longhorn.RobustnessFaulted },
	func(_ *rand.Rand, o *testenv.Objects) {
		o.Volumes[0].Status.CurrentImage = "longhornio/longhorn-engine:other"
	},
	func(_ *rand.Rand, o *testenv.Objects) { o.Engines[1].Status.CurrentState = longhorn.StateStopped },
	func(_ *rand.Rand, o *testenv.Objects) { o.Engines[1].Status.Endpoint = "" },
	func(_ *rand.Rand, o *testenv.Objects) { o.Engines[1].Status.ReplicaModeMap = map[string]string{} },
	func(_ *rand.Rand, o *testenv.Objects) { o.Engines[1].Spec.Active = false },
	func(_ *rand.Rand, o *testenv.Objects) { o.Engines[0].Spec.NodeID = testenv.NodeB }, // both on the current node
	func(_ *rand.Rand, o *testenv.Objects) { o.Engines[0].Spec.Active = false },
	func(_ *rand.Rand, o *testenv.Objects) { o.Deleting = append(o.Deleting, o.Engines[1].Name) },
	func(_ *rand.Rand, o *testenv.Objects) { o.Deleting = append(o.Deleting, o.Engines[0].Name) },
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Spec.DataEngine = longhorn.DataEngineV2 },
	func(rng *rand.Rand, o *testenv.Objects) { // a third active engine on another node
		e := *o.Engines[0]
		e.Labels = maps.Clone(o.Engines[0].Labels)
		e.Name = fmt.Sprintf("%s-x%d", o.Engines[0].Name, len(o.Engines))
		e.Spec.NodeID = "node-c"
		o.Engines = append(o.Engines, &e)
	},
	func(rng *rand.Rand, o *testenv.Objects) { // random replica flags
		for _, r := range o.Replicas {
			r.Spec.Active = rng.IntN(2) == 0
		}
	},
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Spec.Migratable = false },
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Spec.AccessMode = longhorn.AccessModeRWO },
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Status.PendingNodeID = testenv.NodeA },
	func(_ *rand.Rand, o *testenv.Objects) { o.Volumes[0].Status.PendingNodeID = testenv.NodeB },
	func(rng *rand.Rand, o *testenv.Objects) { // an interrupted run: some flags already right
		for _, r := range o.Replicas {
			if rng.IntN(2) == 0 {
				r.Spec.Active = r.Spec.EngineName == o.Engines[1].Name
			}
		}
	},
	func(*rand.Rand, *testenv.Objects) {}, // no change: the repairable state
	func(*rand.Rand, *testenv.Objects) {},
}

// randomObjects draws a #6642 state of vol on version with 0 to 3 mutations.
func randomObjects(rng *rand.Rand, version, vol string) *testenv.Objects {
	o := testenv.TwoActiveEngines(version, vol)
	for n := rng.IntN(4); n > 0; n-- {
		mutations[rng.IntN(len(mutations))](rng, o)
	}
	return o
}

// deletionTime marks the engines of o.Deleting in a pure state.
func deletionTime() *metav1.Time {
	t := metav1.NewTime(time.Now().Add(-time.Minute))
	return &t
}
