package cmd

import (
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fixwatch"
)

// Hooks are the test hooks of the commands that have them, handed to each
// command's Options when the tree is built. Production builds the tree with
// none (NewRootCommand, Execute); a test that runs the real tree passes its
// own to ExecuteWithHooks, so two runs never share them.
type Hooks struct {
	Fix   fix.Hooks
	Guard fixwatch.Hooks
}
