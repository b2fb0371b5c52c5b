package fix

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Strategy is the value of --strategy.
type Strategy string

const (
	// StrategyAuto follows the decision table: deactivate on 1.3/1.4,
	// delete on 1.5.0/1.5.1.
	StrategyAuto Strategy = "auto"
	// StrategyDeactivate sets spec.active=false on the stale engines.
	StrategyDeactivate Strategy = "deactivate"
	// StrategyDelete deletes the stale engines (1.5.0/1.5.1 only).
	StrategyDelete Strategy = "delete"
)

// Strategies are the accepted --strategy values, for help and completion.
var Strategies = []string{string(StrategyAuto), string(StrategyDeactivate), string(StrategyDelete)}

// ParseStrategy checks a --strategy value.
func ParseStrategy(s string) (Strategy, error) {
	for _, v := range Strategies {
		if s == v {
			return Strategy(s), nil
		}
	}
	return "", fmt.Errorf("--strategy must be one of %s (got %q)", strings.Join(Strategies, ", "), s)
}

// EngineActions are the engine actions fix takes on release v with this
// strategy: detect's release table, narrowed to what the strategy allows.
func (s Strategy) EngineActions(v longhorn.Version) []detect.Action {
	var out []detect.Action
	for _, a := range detect.EngineActions(v) {
		switch {
		case s == StrategyDeactivate && a != detect.ActionDeactivate,
			s == StrategyDelete && a != detect.ActionDelete:
			continue
		}
		out = append(out, a)
	}
	return out
}

// chooseAction decides what fix does about a finding. The finding's own
// action (set by detect only when every precondition holds on a release
// fix repairs) is the ceiling: a strategy may pick a different safe engine
// action, never act where detect refused.
func chooseAction(f detect.Finding, v longhorn.Version, s Strategy) (detect.Action, string) {
	if f.Refused() || !f.Action.Writes() {
		return detect.ActionNone, f.Reason
	}
	if f.Action == detect.ActionClearMigrationNode {
		// A volume write, no engine: the strategy has nothing to choose.
		if f.Type != detect.TypeStaleMigrationNodeID {
			return detect.ActionNone, f.Reason
		}
		return f.Action, f.Reason
	}
	if f.Keep == "" {
		return detect.ActionNone, f.Reason
	}
	if f.Action == detect.ActionSetReplicas {
		// Only replica writes: the strategy (what to do to stale engines) has
		// nothing to choose.
		return f.Action, f.Reason
	}
	if f.Type == detect.TypeEnginesOnOneNode && f.Action == detect.ActionDelete && len(f.Stale) > 0 {
		// The engines to delete are inactive already: deactivating them
		// changes nothing.
		if s == StrategyDeactivate {
			return detect.ActionNone, fmt.Sprintf("--strategy=deactivate: %s are inactive already; the repair of this state deletes them; use --strategy=auto", strings.Join(f.Stale, ", "))
		}
		return f.Action, f.Reason
	}
	if f.Type != detect.TypeMultipleActiveEngines || len(f.Stale) == 0 {
		return detect.ActionNone, f.Reason
	}
	switch s {
	case StrategyAuto, "":
		return f.Action, f.Reason
	case StrategyDeactivate:
		return detect.ActionDeactivate, fmt.Sprintf("--strategy=deactivate: set the replica flags right, then spec.active=false on %s, and keep %s; Longhorn then finishes the confirm itself",
			strings.Join(f.Stale, ", "), f.Keep)
	case StrategyDelete:
		if f.Action == detect.ActionDelete {
			return f.Action, f.Reason
		}
		return detect.ActionNone, fmt.Sprintf("--strategy=delete refused on Longhorn %s for this volume: deleting the stale engine is safe only on 1.5.0/1.5.1 with status.currentMigrationNodeID equal to the current node, "+
			"which makes Longhorn re-enter the confirm; otherwise nothing switches the replicas once it is gone (see "+docs.Troubleshooting+"); "+
			"use --strategy=auto, which deactivates it instead", v)
	}
	return detect.ActionNone, fmt.Sprintf("--strategy=%s is not safe on Longhorn %s (%s): no action", s, v, v.Class())
}
