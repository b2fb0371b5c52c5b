package explore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

// Fixture is a shrunk state on which Longhorn and the tool disagreed: the
// regression test replays it (testdata/*.json).
type Fixture struct {
	Release string `json:"release"`
	// Kind is the disagreement found (Kind* constants).
	Kind string `json:"kind"`
	// Found is where it came from ("seed 27 state 12") and what was seen.
	Found  string `json:"found"`
	Detail string `json:"detail"`
	// Finding is scan's finding on the shrunk state (type/severity/action).
	Finding string `json:"finding"`
	State   State  `json:"state"`
}

// Name is the fixture's file name: release, kind and a hash of the state.
func (f Fixture) Name() string {
	data, _ := json.Marshal(f.State)
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%s-%s-%s.json", f.Release, f.Kind, hex.EncodeToString(sum[:4]))
}

// Save writes the fixture into dir.
func (f Fixture) Save(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, f.Name())
	return p, os.WriteFile(p, append(data, '\n'), 0o644)
}

// LoadFixtures reads every fixture of dir, by file name.
func LoadFixtures(dir string) ([]Fixture, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Fixture
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		var f Fixture
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// Has reports whether r found a disagreement of kind.
func (r *Result) Has(kind string) *Disagreement {
	for i := range r.Found {
		if r.Found[i].Kind == kind {
			return &r.Found[i]
		}
	}
	return nil
}

// Shrink looks for a simplest state that still shows the disagreement of
// kind: each round runs every one-step simplification (State.Simpler) in
// one batch and keeps the first that still disagrees the same way. It
// stops when none does, or after rounds.
func Shrink(ctx context.Context, c *testcluster.Cluster, rel string, r Result, kind string, o Options, rounds int) (Result, error) {
	cur := r
	for range rounds {
		cands := cur.Case.State.Simpler()
		if len(cands) == 0 {
			break
		}
		cases := make([]Case, len(cands))
		for i, s := range cands {
			cases[i] = Case{Name: r.Case.Name + " (shrunk)", State: s}
		}
		res, err := Batch(ctx, c, rel, cases, o)
		if err != nil {
			return cur, err
		}
		next := -1
		for i := range res {
			if res[i].Has(kind) != nil {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		cur = res[next]
	}
	return cur, nil
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(data)
}

// stats counts one release's run.
type stats struct {
	states    int
	verdicts  map[Verdict]int
	outcomes  map[Outcome]int
	kinds     map[string]int
	fixes     int
	stops     int
	fixLost   int // check (b): data lost after a whole fix run
	stopLost  int // check (c): data lost after a stopped run and the next step
	conflicts int // check (b) with Options.Conflicts: 409s answered
	newOnes   []Result
}

func newStats() *stats {
	return &stats{verdicts: map[Verdict]int{}, outcomes: map[Outcome]int{}, kinds: map[string]int{}}
}

func (s *stats) add(r Result) {
	s.states++
	s.verdicts[r.Verdict]++
	s.outcomes[r.Oracle.Outcome]++
	for _, d := range r.Found {
		s.kinds[d.Kind]++
	}
	if r.Fix != nil {
		s.fixes++
		s.conflicts += r.Fix.Conflicts
		if r.Fix.Observed.Outcome == OutcomeLost {
			s.fixLost++
		}
	}
	for _, st := range r.Stops {
		s.stops++
		if st.Observed.Outcome == OutcomeLost {
			s.stopLost++
		}
	}
}

func (s *stats) String() string {
	kv := func(m map[string]int) string {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	v, o := map[string]int{}, map[string]int{}
	for k, n := range s.verdicts {
		v[string(k)] = n
	}
	for k, n := range s.outcomes {
		o[string(k)] = n
	}
	conflicts := ""
	if s.conflicts > 0 {
		conflicts = fmt.Sprintf(", %d of Longhorn's replica writes after them answered 409", s.conflicts)
	}
	return fmt.Sprintf("%d states; verdicts %s; Longhorn alone %s; fix runs %d (data lost after %d%s), interrupted runs %d (data lost after %d); disagreements %s",
		s.states, kv(v), kv(o), s.fixes, s.fixLost, conflicts, s.stops, s.stopLost, kv(s.kinds))
}
