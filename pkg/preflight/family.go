package preflight

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// familyProblems says in a few words why each state of the stuck-migration
// family blocks a drain (docs/troubleshooting-migration-family.md).
var familyProblems = map[detect.Type]string{
	detect.TypeMigrationNeverConfirmed:   "a ready live migration nothing confirms: draining either node hangs",
	detect.TypeStaleMigrationNodeID:      "a detached volume Longhorn still treats as migrating: it loops between detaching and detached",
	detect.TypeMigrationWithoutNode:      "a migration target with no source node: no engine can become current",
	detect.TypeMigrationBlockedByTickets: "backup or snapshot tickets take the migration's place: the drain's migration is refused",
	detect.TypeLeftoverAttachRequest:     "a leftover attach request keeps the volume from attaching where the workload goes",
	detect.TypeUpgradeMigrationDeadlock:  "an engine upgrade and a migration wait for each other",
	detect.TypeMigrationReplicaChurn:     "the migration engine restarts for ever: the migration never becomes ready",
	detect.TypeConfirmWithoutEngine:      "a confirm with no engine on the target: Longhorn never finishes it",
	detect.TypeEnginesOnOneNode:          "two engines on the node Longhorn switches to: the migration never ends, the volume cannot detach",
	detect.TypeEngineOffNode:             "the volume's one engine runs on another node than the one it is attached to: nothing serves it there",
}

// familyBlocker is the blocker of a family state: fix where it repairs the
// state (clear-migration-node on a proven release), else the maintainers'
// steps to run by hand.
func familyBlocker(b *Blocker, f *detect.Finding, ns string) {
	b.Problem = familyProblems[f.Type]
	if b.Problem == "" {
		b.Problem = string(f.Type)
	}
	b.Family = f.Family
	refs := strings.Join(append(append([]string{}, f.Family.Issues...), f.Family.Doc), "; ")
	if f.Action.Writes() {
		b.Command = cmdPrefix + "fix " + f.Volume + ns
		b.Resolve = fmt.Sprintf("%s (%s)", f.Reason, refs)
		return
	}
	b.Command = cmdPrefix + "describe " + f.Volume + ns
	b.Resolve = fmt.Sprintf("%s (%s); the maintainers' repair, by hand: %s",
		f.Reason, refs, strings.Join(f.Family.Steps, "; then "))
}
