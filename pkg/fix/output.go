package fix

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// Printer writes fix's output: the plan, kubectl-style change lines and one
// line per volume to Out; progress, warnings and the summary to ErrOut. It
// serialises lines from parallel repairs. A nil Printer prints nothing.
type Printer struct {
	mu     sync.Mutex
	Out    io.Writer
	ErrOut io.Writer
	Paint  cmdutil.Painter
	// Reporter shows waits on Longhorn and the n/N count on stderr; every
	// other line first takes its live line off the screen.
	Reporter *progress.Reporter
}

// lock serialises a line and clears the live progress line before it.
func (p *Printer) lock() {
	p.mu.Lock()
	p.Reporter.Clear()
}

// Done counts one volume of the run finished (nil-safe).
func (p *Printer) Done(volume string) {
	if p != nil {
		p.Reporter.Done(volume)
	}
}

// Begin starts a progress report of a wait (nil-safe).
func (p *Printer) Begin(what string, timeout time.Duration) *progress.Wait {
	if p == nil {
		return nil
	}
	return p.Reporter.Begin(what, timeout)
}

// Changed prints `engine.longhorn.io "x" deactivated`, with kubectl's dry-run
// suffixes.
func (p *Printer) Changed(res longhorn.Resource, name, verb string, dry cmdutil.DryRun) {
	if p == nil {
		return
	}
	p.lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.Out, "%s %q %s%s\n", res.Qualified(), name, verb, dry.Suffix())
}

// Outcome prints `volume.longhorn.io "x" <result>: <detail>` and, after
// inverted flags, the recovery steps on ErrOut.
func (p *Printer) Outcome(o Outcome) {
	if p == nil {
		return
	}
	p.lock()
	defer p.mu.Unlock()
	word := string(o.Result)
	switch {
	case o.Result == ResultInverted || o.Result == ResultFailed:
		word = p.Paint.Red(word)
	case !o.Result.OK():
		word = p.Paint.Yellow(word)
	case o.Result == ResultRepaired:
		word = p.Paint.Green(word)
	}
	fmt.Fprintf(p.Out, "%s %q %s: %s\n", longhorn.Volumes.Qualified(), o.Volume, word, o.Detail)
	if len(o.Recovery) > 0 {
		fmt.Fprintf(p.ErrOut, "%s volume %s needs manual recovery; no further change was made to any volume:\n", p.Paint.Red("STOP:"), o.Volume)
		for i, s := range o.Recovery {
			fmt.Fprintf(p.ErrOut, "  %d. %s\n", i+1, s)
		}
		if o.Backup != "" {
			fmt.Fprintf(p.ErrOut, "  The objects as they were before the change: %s\n", o.Backup)
		}
	}
}

// Progress prints one progress line on ErrOut.
func (p *Printer) Progress(format string, args ...any) {
	if p == nil {
		return
	}
	p.lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.ErrOut, safetext.Lines(fmt.Sprintf(format, args...)))
}

// Plan prints the plan as a table and one "why" line per volume.
func (p *Printer) Plan(plan *Plan) {
	p.lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.Out, "Plan for Longhorn %s (%s) in namespace %s, strategy %s:\n", plan.Version, detect.ReleaseWords(plan.Version), plan.Namespace, plan.Strategy)
	tw := tabwriter.NewWriter(p.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VOLUME\tACTION\tENGINE\tNODE\tKEEP\tKEEP-NODE")
	for _, v := range plan.Volumes {
		stale, nodes := "-", "-"
		if len(v.Stale) > 0 {
			var ns []string
			for _, e := range v.Stale {
				ns = append(ns, orDash(e.NodeID))
			}
			stale, nodes = names(v.Stale), strings.Join(ns, ",")
		}
		keep, keepNode := "-", "-"
		if v.Keep.Name != "" {
			keep, keepNode = v.Keep.Name, orDash(v.Keep.NodeID)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.Volume, actionWord(v), stale, nodes, keep, keepNode)
	}
	tw.Flush()
	if len(plan.Volumes) > 0 {
		fmt.Fprintln(p.Out, "Why:")
	}
	for _, v := range plan.Volumes {
		fmt.Fprintf(p.Out, "  %s: %s\n", v.Volume, v.Why)
	}
	// Every write, in the order the repair makes it: the table's ENGINE
	// column names only the engines, not the replica writes before them.
	for _, v := range plan.Volumes {
		ws := v.Writes()
		if len(ws) == 0 {
			continue
		}
		fmt.Fprintf(p.Out, "Writes for %s, in this order:\n", v.Volume)
		for i, w := range ws {
			fmt.Fprintf(p.Out, "  %d. %s %q: %s\n", i+1, w.Resource.Qualified(), w.Name, w.Fields)
		}
	}
}

func actionWord(v Planned) string {
	if v.Acts() {
		return string(v.Action)
	}
	return "none"
}

// Summary prints one line that counts the results, on ErrOut.
func (p *Printer) Summary(outs []Outcome, backupDir string) {
	p.lock()
	defer p.mu.Unlock()
	counts := map[Result]int{}
	for _, o := range outs {
		counts[o.Result]++
	}
	keys := make([]string, 0, len(counts))
	for r := range counts {
		keys = append(keys, string(r))
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", counts[Result(k)], k))
	}
	line := fmt.Sprintf("Summary: %d volume(s)", len(outs))
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	if backupDir != "" {
		line += "; backups and " + ActionLogName + " in " + backupDir
	}
	fmt.Fprintln(p.ErrOut, line)
}
