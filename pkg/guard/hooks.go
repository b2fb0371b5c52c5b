package guard

import (
	"sync"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// testHooks let the tests of this package, which run the real command tree,
// follow a guard from outside instead of reading its output while it runs.
// They are unset in production.
var testHooks struct {
	mu sync.Mutex
	// watching is called once the caches are synced and the start line is
	// written.
	watching func(namespace string)
	// classified is called after each classification of a volume (typ is
	// "" for a healthy volume) with the Longhorn version it used.
	classified func(namespace, volume string, typ detect.Type, version string)
	// finished is called after each repair outcome is recorded.
	finished func(namespace string, out fix.Outcome)
	// pollInterval overrides fix's verification poll interval.
	pollInterval time.Duration
}

func hookWatching(ns string) {
	testHooks.mu.Lock()
	f := testHooks.watching
	testHooks.mu.Unlock()
	if f != nil {
		f(ns)
	}
}

func hookClassified(ns, vol string, f *detect.Finding, version string) {
	testHooks.mu.Lock()
	h := testHooks.classified
	testHooks.mu.Unlock()
	if h == nil {
		return
	}
	var typ detect.Type
	if f != nil {
		typ = f.Type
	}
	h(ns, vol, typ, version)
}

func hookFinished(ns string, out fix.Outcome) {
	testHooks.mu.Lock()
	h := testHooks.finished
	testHooks.mu.Unlock()
	if h != nil {
		h(ns, out)
	}
}

func pollInterval() time.Duration {
	testHooks.mu.Lock()
	defer testHooks.mu.Unlock()
	if testHooks.pollInterval > 0 {
		return testHooks.pollInterval
	}
	return 2 * time.Second
}
