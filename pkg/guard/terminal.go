package guard

import "github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"

// The guard asks once, at start, and only on a terminal; a Job or a script
// must say --yes.
var (
	isTerminal = cmdutil.IsTerminal
	confirm    = cmdutil.Confirm
)
