package guard

import (
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// SetTestHooks installs the hooks for the command tests in package
// guard_test, which run the real command tree (pkg/cmd imports this
// package, so they cannot live here).
func SetTestHooks(watching func(ns string), classified func(ns, vol string, typ detect.Type, version string), finished func(ns string, out fix.Outcome), poll time.Duration) {
	testHooks.mu.Lock()
	defer testHooks.mu.Unlock()
	testHooks.watching, testHooks.classified, testHooks.finished, testHooks.pollInterval = watching, classified, finished, poll
}
