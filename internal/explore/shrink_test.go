package explore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

// shrinkAndSave shrinks each new disagreement, saves its fixture in
// testdata (and EXPLORE_FIXTURES, when set) and appends a raw entry to
// EXPLORE_FINDINGS, when set.
func shrinkAndSave(t *testing.T, c *testcluster.Cluster, rel string, found []Result) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range found {
		for _, d := range r.Found {
			if knownFor(r, d) != nil {
				continue
			}
			key := d.Kind + "/" + r.Finding + "/" + r.Case.State.Story
			if seen[key] {
				continue // one fixture per kind, finding and story per run
			}
			seen[key] = true
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
			o := batchOptions()
			o.Interrupted = strings.HasPrefix(d.Kind, "interrupted")
			small, err := Shrink(ctx, c, rel, r, d.Kind, o, envInt("EXPLORE_SHRINK_ROUNDS", 12))
			cancel()
			if err != nil {
				t.Logf("shrink %s: %v", r.Case.Name, err)
				small = r
			}
			got := small.Has(d.Kind)
			if got == nil {
				got = &d
			}
			f := Fixture{Release: rel, Kind: d.Kind, Found: r.Case.Name, Detail: got.Detail, Finding: small.Finding, State: small.Case.State}
			p, err := f.Save("testdata")
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("fixture %s: %s", p, got.Detail)
			if dir := os.Getenv("EXPLORE_FIXTURES"); dir != "" {
				if _, err := f.Save(dir); err != nil {
					t.Log(err)
				}
			}
			if path := os.Getenv("EXPLORE_FINDINGS"); path != "" {
				appendFinding(t, path, f, filepath.Join("internal/explore", p))
			}
		}
	}
}

func appendFinding(t *testing.T, path string, f Fixture, fixture string) {
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Log(err)
		return
	}
	defer fh.Close()
	fmt.Fprintf(fh, "\n## %s on Longhorn %s (%s)\n\n- fixture: `%s` (branch explore; copy in /work/notes/explore-fixtures/)\n- found: %s; story %s\n- scan: %s\n- Longhorn: %s\n- state: `%s`\n- reading: (to follow)\n",
		f.Kind, f.Release, f.Name(), fixture, f.Found, f.State.Story, f.Finding, f.Detail, mustJSON(f.State))
}
