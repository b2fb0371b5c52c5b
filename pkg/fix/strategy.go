package fix

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
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

// chooseAction decides what fix does to a finding's stale engines. The
// finding's own action (set by detect only when every precondition holds on
// an affected release) is the ceiling: a strategy may pick a different safe
// action, never act where detect refused.
func chooseAction(f detect.Finding, v longhorn.Version, s Strategy) (detect.Action, string) {
	if f.Type != detect.TypeMultipleActiveEngines {
		return detect.ActionNone, f.Reason
	}
	if f.Refused() || (f.Action != detect.ActionDeactivate && f.Action != detect.ActionDelete) || f.Keep == "" || len(f.Stale) == 0 {
		return detect.ActionNone, f.Reason
	}
	cls := v.Class()
	switch s {
	case StrategyAuto, "":
		return f.Action, f.Reason
	case StrategyDeactivate:
		switch cls {
		case longhorn.ClassL13, longhorn.ClassL14a, longhorn.ClassL15a:
			return detect.ActionDeactivate, fmt.Sprintf("--strategy=deactivate: set spec.active=false on %s and keep %s; Longhorn then finishes the confirm itself",
				strings.Join(f.Stale, ", "), f.Keep)
		}
	case StrategyDelete:
		switch cls {
		case longhorn.ClassL15a:
			return detect.ActionDelete, fmt.Sprintf("--strategy=delete: delete %s and keep %s (the documented workaround for 1.5.0/1.5.1)",
				strings.Join(f.Stale, ", "), f.Keep)
		case longhorn.ClassL13, longhorn.ClassL14a:
			return detect.ActionNone, fmt.Sprintf("--strategy=delete refused on Longhorn %s: deleting the stale engine there skips the replica flip, "+
				"and Longhorn then deletes the inactive replicas that back %s and may wipe the shared data directories (domain reference §8.2); "+
				"use --strategy=auto, which deactivates it instead", v, f.Keep)
		}
	}
	return detect.ActionNone, fmt.Sprintf("--strategy=%s is not safe on Longhorn %s (%s): no action", s, v, cls)
}
