package migrate

import "github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"

// What migrate's exit codes mean (the table is cmdutil's; docs/exit-codes.md).
// 0 means the volume ended verified where it was asked to be (or, for status
// and dry runs, that the answer was printed).
const (
	// ExitStopped: refused by a pre-check, aborted at the prompt, or the
	// migration failed and was rolled back; the volume is verified on the node
	// it started on.
	ExitStopped = cmdutil.ExitFailure
	// ExitNoCheck: the cluster could not be read (unreachable, forbidden,
	// Longhorn missing, unknown volume); nothing was written.
	ExitNoCheck = cmdutil.ExitNoCheck
	// ExitAttention: the volume needs a person: a rollback or a confirm could
	// not be verified, or the confirm left two active engines (longhorn#6642).
	ExitAttention = cmdutil.ExitAttention
)
