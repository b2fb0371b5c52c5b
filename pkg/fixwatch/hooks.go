package fixwatch

import (
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// Hooks let a test follow a guard from outside instead of reading its output
// while it runs. They are Window.Hooks (and Config.Hooks), zero in
// production: tests that run the real command tree hand them in when they
// build it (cmd.Hooks). They are set before the run and never changed, so
// they need no lock.
type Hooks struct {
	// Watching is called once the caches are synced and the start line is
	// written.
	Watching func(namespace string)
	// Classified is called after each classification of a volume (typ is
	// "" for a healthy volume) with the Longhorn version it used.
	Classified func(namespace, volume string, typ detect.Type, version string)
	// Finished is called after each repair outcome is recorded.
	Finished func(namespace string, out fix.Outcome)
	// MetricsServing is called with the address the metrics are served on
	// (--metrics-bind-address), before the guard starts watching.
	MetricsServing func(namespace, addr string)
	// PollInterval overrides fix's verification poll interval.
	PollInterval time.Duration
}

func (h Hooks) watching(ns string) {
	if h.Watching != nil {
		h.Watching(ns)
	}
}

func (h Hooks) classified(ns, vol string, f *detect.Finding, version string) {
	if h.Classified == nil {
		return
	}
	var typ detect.Type
	if f != nil {
		typ = f.Type
	}
	h.Classified(ns, vol, typ, version)
}

func (h Hooks) finished(ns string, out fix.Outcome) {
	if h.Finished != nil {
		h.Finished(ns, out)
	}
}

func (h Hooks) pollInterval() time.Duration {
	if h.PollInterval > 0 {
		return h.PollInterval
	}
	return 2 * time.Second
}
