package detect

import (
	"fmt"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Overdue reports a state Longhorn finishes by itself (action wait) that
// has lasted past the threshold, so it needs a person's attention: fix
// still does not act on it (the finalizer is Longhorn's to remove).
func (f *Finding) Overdue() bool {
	return f.Action == ActionWait && f.Severity.NeedsAttention()
}

// Decision is what fix would do with the finding, in the words scan's
// reason, describe's Decision and fix's outcome line all use for a state
// fix leaves to Longhorn, so the three commands never disagree about it.
// "" for a finding fix acts on or that is refused for a failed check.
func (f *Finding) Decision() string {
	switch {
	case f.Overdue():
		age := ""
		if f.Age != nil {
			age = fmt.Sprintf(" (for %s)", f.Age.Round(1e9))
		}
		return "wait, overdue" + age + ": Longhorn has not finished this in time; fix does not act on it, a person must check Longhorn (see the reason)"
	case f.Action == ActionWait:
		return "wait: Longhorn is still working on it, nothing to do"
	}
	return ""
}

// ReleaseWords says in words what a release means for longhorn#6642, for
// terminal output: the support-matrix class codes (L14a, ...) are for the
// JSON reports and the docs.
func ReleaseWords(v longhorn.Version) string {
	switch {
	case !v.Known():
		return "release unknown"
	case v.Class() == longhorn.ClassUnsupported:
		return "not supported: older than 1.3"
	case v.Affected():
		return "affected by longhorn#6642"
	}
	return "has the fix for longhorn#6642"
}
