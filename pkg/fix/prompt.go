package fix

import (
	"context"
	"errors"
	"fmt"
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

// confirmOrStop asks, and gives up when ctx ends (a signal at the prompt):
// the read of stdin cannot be interrupted, so it is left behind and the run
// goes on to exit.
func confirmOrStop(ctx context.Context, in io.Reader, errOut io.Writer, question string) (bool, error) {
	answer := make(chan bool, 1)
	go func() { answer <- confirm(in, errOut, question) }()
	select {
	case ok := <-answer:
		return ok, nil
	case <-ctx.Done():
		fmt.Fprintln(errOut)
		return false, errors.New("stopped at the prompt: nothing was changed")
	}
}

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
	// BackupStore wraps the backup folder's store (a full disk, say).
	BackupStore func(BackupStore) BackupStore
	// ConfigMaps replaces the API client of --backup-to configmap.
	ConfigMaps ConfigMapCreator
}
