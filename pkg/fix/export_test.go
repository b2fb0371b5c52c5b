package fix

import (
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Exported for the command tests in package fix_test, which run the real
// command tree (pkg/cmd imports this package, so they cannot live here).
var Restorable = restorable

// RandomObjects draws a random #6642-like state (see gen_test.go).
var RandomObjects = randomObjects

// PlanActs plans a state as fix does and tells which volumes it would act on.
func PlanActs(st *longhorn.State) map[string]bool {
	res := detect.Classify(st, detect.Options{SkipOrphans: true})
	out := map[string]bool{}
	for _, p := range planState(st, res, nil, StrategyAuto).Volumes {
		out[p.Volume] = p.Acts()
	}
	return out
}
