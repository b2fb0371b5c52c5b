package fixwatch

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Report is what a guard run did and what it leaves behind.
type Report struct {
	Namespace string
	Duration  time.Duration
	// Reason says why the run ended.
	Reason string
	// Volumes is the number of volumes watched at the end.
	Volumes int
	// Outcomes lists every repair the guard ran, in order.
	Outcomes []fix.Outcome
	// Unrepaired lists the volumes that need attention at the end.
	Unrepaired []Unrepaired
	// Inverted lists the volumes whose replica flags ended inverted.
	Inverted []string
}

// Unrepaired is a volume the guard leaves in a state that needs a person.
type Unrepaired struct {
	Volume string
	Why    string
}

// report classifies every watched volume once more from the caches.
func (g *Guard) report(start time.Time, reason string) *Report {
	now := time.Now()
	rep := &Report{Namespace: g.ns, Duration: now.Sub(start), Reason: reason}
	vols := g.volumeNames()
	sort.Strings(vols)
	rep.Volumes = len(vols)
	for _, vol := range vols {
		st, found, err := g.stateFor(vol, now)
		if err != nil {
			rep.Unrepaired = append(rep.Unrepaired, Unrepaired{vol, "could not be classified: " + err.Error()})
			continue
		}
		if !found {
			continue
		}
		var f *detect.Finding
		if x, ok := detect.ClassifyVolume(st, vol, detectOpts); ok {
			f = &x
		}
		sig := signatureOf(f)
		g.mu.Lock()
		vs := g.t.vols[vol]
		g.mu.Unlock()
		switch {
		case vs != nil && vs.final != nil && !sig.empty() && vs.finalSig == sig:
			if !vs.final.Result.OK() {
				rep.Unrepaired = append(rep.Unrepaired, Unrepaired{vol, fmt.Sprintf("%s, last repair %s: %s", f.Type, vs.final.Result, vs.final.Detail)})
			}
		case !sig.empty():
			since := "now"
			if vs != nil && vs.sig == sig {
				since = "for " + cmdutil.Duration(now.Sub(vs.since))
			}
			rep.Unrepaired = append(rep.Unrepaired, Unrepaired{vol, fmt.Sprintf("%s %s, not repaired (it must stay so for --settle %s): %s", f.Type, since, g.settle, f.Reason)})
		case f != nil && f.Severity.NeedsAttention():
			rep.Unrepaired = append(rep.Unrepaired, Unrepaired{vol, fmt.Sprintf("%s (%s): %s", f.Type, f.Severity, f.Reason)})
		}
	}
	g.mu.Lock()
	rep.Outcomes = append(rep.Outcomes, g.records...)
	rep.Inverted = append(rep.Inverted, g.inverted...)
	g.mu.Unlock()
	return rep
}

// ExitCode follows fix: 0 nothing stayed unrepaired, 1 something did, 3
// replica flags ended inverted.
func (r *Report) ExitCode() int {
	switch {
	case len(r.Inverted) > 0:
		return cmdutil.ExitAttention
	case len(r.Unrepaired) > 0:
		return cmdutil.ExitNeedsAction
	}
	return cmdutil.ExitOK
}

// print writes the summary: one line of counts, then one line per repair
// and per volume left needing attention.
func (r *Report) print(s *stamper, backupDir string) {
	counts := map[fix.Result]int{}
	for _, o := range r.Outcomes {
		counts[o.Result]++
	}
	var parts []string
	for _, k := range longhorn.SortedKeys(stringKeys(counts)) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[fix.Result(k)], k))
	}
	repairs := "none"
	if len(parts) > 0 {
		repairs = strings.Join(parts, ", ")
	}
	line := fmt.Sprintf("Summary: watched namespace %s for %s (%s); %d volume(s); repairs: %s; %d volume(s) need attention",
		r.Namespace, cmdutil.Duration(r.Duration), r.Reason, r.Volumes, repairs, len(r.Unrepaired))
	if backupDir != "" {
		line += "; backups and " + fix.ActionLogName + " in " + backupDir
	}
	s.Printf("%s", line)
	for _, o := range r.Outcomes {
		s.Printf("  repair: %s %q %s: %s", longhorn.Volumes.Qualified(), o.Volume, o.Result, o.Detail)
	}
	for _, u := range r.Unrepaired {
		s.Printf("  needs attention: %s %q: %s", longhorn.Volumes.Qualified(), u.Volume, u.Why)
	}
}

func stringKeys(m map[fix.Result]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[string(k)] = v
	}
	return out
}
