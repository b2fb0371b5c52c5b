package fix

import (
	"io"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// isTerminal is cmdutil.IsTerminal, unless a test stands in for a terminal.
func isTerminal(in io.Reader) bool {
	if testHooks.Terminal != nil {
		return testHooks.Terminal(in)
	}
	return cmdutil.IsTerminal(in)
}

// confirm is cmdutil.Confirm.
var confirm = cmdutil.Confirm

// testHooks let tests of this package reach into a run of the real command
// tree. They are nil in production.
var testHooks struct {
	// AfterPlan runs after the plan is printed and confirmed, before the
	// first re-check.
	AfterPlan func()
	// BeforeWrite runs right before each write, after the re-check and the
	// backup.
	BeforeWrite func(engine string)
	// AfterWrite runs right after each successful write.
	AfterWrite func(engine string)
	// Terminal overrides the terminal test of stdin.
	Terminal func(io.Reader) bool
	// PollInterval overrides the verification poll interval.
	PollInterval time.Duration
}
