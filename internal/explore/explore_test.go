package explore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// envInt reads an integer knob of `make explore`.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// batchOptions are the explorer's bounds; EXPLORE_QUIET (seconds) widens
// the quiet period on a loaded machine, EXPLORE_CHURN (seconds) how long a
// volume that never settles is waited for (120, the most, as before
// 2026-12-07).
// EXPLORE_LOGS names a file that receives the controllers' log;
// EXPLORE_CONFLICTS=1 answers 409 to the controllers' first update of each
// replica after a whole fix (Options.Conflicts).
func batchOptions() Options {
	o := Options{Interrupted: true, Quiet: time.Duration(envInt("EXPLORE_QUIET", 8)) * time.Second,
		Churn: time.Duration(envInt("EXPLORE_CHURN", 45)) * time.Second, SimOracle: simOracle(),
		Conflicts: os.Getenv("EXPLORE_CONFLICTS") == "1"}
	if f := logFile(); f != nil {
		o.Logs = f
	}
	return o
}

// logFile is EXPLORE_LOGS, opened once for every batch of the process
// (closed when it exits); nil when unset or not writable.
var logFile = sync.OnceValue(func() *os.File {
	p := os.Getenv("EXPLORE_LOGS")
	if p == "" {
		return nil
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil
	}
	return f
})

// sampleSize is the CI sample per release (make test): sized so that the
// three checks on every real release add about a minute and a half each
// to a warm make test on 2 cores (docs/testing.md, "The explorer").
const sampleSize = 24

// TestExplore generates states of every real release, has Longhorn's own
// controllers judge scan's verdicts and fix's repairs on them (checks a,
// b, c), and fails on any disagreement not in knownDisagreements. With
// EXPLORE_N, EXPLORE_SEED, EXPLORE_BATCH, EXPLORE_PARALLEL and
// EXPLORE_RELEASE it is the long run of `make explore`.
func TestExplore(t *testing.T) {
	seed := uint64(envInt("EXPLORE_SEED", 27))
	n := envInt("EXPLORE_N", sampleSize)
	batch := envInt("EXPLORE_BATCH", 96)
	// EXPLORE_FIRST resumes a long run at that state (a run stopped at a
	// session's end goes on in the next, on a machine of its own).
	first := envInt("EXPLORE_FIRST", 0)
	for _, rel := range selectedReleases() {
		t.Run(rel, func(t *testing.T) {
			c := suite.Cluster(t, rel)
			start := time.Now()
			stats := newStats()
			// Batches run EXPLORE_PARALLEL at a time, each in its own namespace with
			// its own controllers: a batch mostly waits for Longhorn to
			// go quiet. Results are taken in batch order.
			var outs []chan batchOut
			for i := first; i < n; i += batch {
				outs = append(outs, make(chan batchOut, 1))
			}
			go func() {
				sem := make(chan struct{}, envInt("EXPLORE_PARALLEL", 2))
				for k, out := range outs {
					var cases []Case
					for i := first + k*batch; i < min(first+(k+1)*batch, n); i++ {
						cases = append(cases, Case{Name: fmt.Sprintf("seed %d state %d", seed, i), State: Generate(rel, seed, i)})
					}
					sem <- struct{}{} // in batch order
					go func() {
						defer func() { <-sem }()
						ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
						defer cancel()
						o := batchOptions()
						o.Trace = t.Logf
						res, err := Batch(ctx, c, rel, cases, o)
						out <- batchOut{res, err}
					}()
				}
			}()
			for _, out := range outs {
				b := <-out
				if b.err != nil {
					t.Error(b.err)
					continue
				}
				res := b.res
				record(t, rel, res)
				for _, r := range res {
					stats.add(r)
					for _, d := range r.Found {
						if k := knownFor(r, d); k != nil {
							t.Logf("known disagreement (%s) on %s: %s: %s", k.Entry, r.Case.Name, d.Kind, d.Detail)
							continue
						}
						t.Errorf("Longhorn %s disagrees with the tool on %s (story %s, scan %s): %s: %s\nstate: %s",
							rel, r.Case.Name, r.Case.State.Story, r.Finding, d.Kind, d.Detail, mustJSON(r.Case.State))
						stats.newOnes = append(stats.newOnes, r)
					}
				}
			}
			took := time.Since(start)
			t.Logf("Longhorn %s: %s in %s (%.2f states/s)", rel, stats, took.Round(time.Second), float64(stats.states)/took.Seconds())
			if len(stats.newOnes) > 0 && os.Getenv("EXPLORE_SHRINK") != "" {
				shrinkAndSave(t, c, rel, stats.newOnes)
			}
		})
	}
}

// batchOut is one batch's results, or why it failed.
type batchOut struct {
	res []Result
	err error
}

// TestFixtures replays every saved disagreement on its release: a fixed
// one must agree now; one still in knownDisagreements may disagree only
// the way its entry says. The fixtures under testdata/long replay many
// copies each (a state fix can be stopped in after every write) and prove
// what a real-controller test of internal/realtest proves too, or the
// explorer's own rule: make explore replays them (EXPLORE_LONG=1), make
// test does not, for the CI budget.
func TestFixtures(t *testing.T) {
	fixtures, err := LoadFixtures("testdata")
	if err != nil {
		t.Fatal(err)
	}
	// EXPLORE_PENDING=1 also replays testdata/pending, to triage what
	// waits there.
	for env, dir := range map[string]string{"EXPLORE_LONG": "long", "EXPLORE_PENDING": "pending"} {
		if os.Getenv(env) == "" {
			continue
		}
		more, err := LoadFixtures(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		fixtures = append(fixtures, more...)
	}
	byRelease := map[string][]Fixture{}
	for _, f := range fixtures {
		byRelease[f.Release] = append(byRelease[f.Release], f)
	}
	for _, rel := range selectedReleases() {
		fs := byRelease[rel]
		if len(fs) == 0 {
			continue
		}
		t.Run(rel, func(t *testing.T) {
			c := suite.Cluster(t, rel)
			cases := make([]Case, len(fs))
			for i, f := range fs {
				cases[i] = Case{Name: f.Name(), State: f.State}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			o := batchOptions()
			o.AfterLast = true
			o.Trace = t.Logf
			res, err := Batch(ctx, c, rel, cases, o)
			if err != nil {
				t.Fatal(err)
			}
			record(t, rel, res)
			for _, r := range res {
				for _, d := range r.Found {
					if k := knownFor(r, d); k != nil {
						t.Logf("%s: known (%s): %s", r.Case.Name, k.Entry, d.Detail)
						continue
					}
					t.Errorf("%s: Longhorn %s disagrees with the tool (scan %s): %s: %s", r.Case.Name, rel, r.Finding, d.Kind, d.Detail)
				}
			}
		})
	}
}

// record appends every result to EXPLORE_OUT/<release>.jsonl, when set.
func record(t *testing.T, rel string, res []Result) {
	dir := os.Getenv("EXPLORE_OUT")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Log(err)
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, rel+".jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Log(err)
		return
	}
	defer f.Close()
	for _, r := range res {
		fmt.Fprintln(f, mustJSON(r))
	}
}
