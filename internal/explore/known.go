package explore

// Known is a disagreement between the tool and Longhorn that the explorer
// found and that is not fixed on this branch yet: the explorer reports it
// and does not fail on it. Every entry cites its entry in the findings
// handed to the engineers who change the tool; it leaves this list with
// the fix that closes it, and its fixture then replays as a regression
// test (TestFixtures).
type Known struct {
	// Entry is the finding's title in the findings list.
	Entry string
	// Kind is the disagreement kind (Kind* constants).
	Kind string
	// Match picks the results it covers.
	Match func(r Result) bool
}

// knownDisagreements is the one exception list.
var knownDisagreements = []Known{}

// knownFor returns the entry that covers d on r, or nil.
func knownFor(r Result, d Disagreement) *Known {
	for i := range knownDisagreements {
		k := &knownDisagreements[i]
		if k.Kind == d.Kind && k.Match(r) {
			return k
		}
	}
	return nil
}
