package detect

import "fmt"

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
