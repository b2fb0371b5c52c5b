package scan

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// Offline analysis: --bundle reads a Longhorn support bundle, -f reads
// `kubectl get -o yaml|json` output. Both yield the State a live read
// yields, so detection, the report and the exit codes are the same; the
// bundle's manager logs add evidence after classification.

// offline reports whether the scan reads a bundle or files, not the cluster.
// Filenames is nil unless -f was given: `-f ""` leaves it empty, not nil,
// and must not fall back to the cluster.
func (o *Options) offline() bool { return o.Bundle != "" || o.Filenames != nil }

func (o *Options) validateOffline() error {
	if o.Bundle != "" && o.Filenames != nil {
		return errors.New("--bundle and -f/--filename cannot be used together")
	}
	if o.Filenames != nil && len(o.Filenames) == 0 {
		return errors.New("-f/--filename needs a file name (or - for stdin)")
	}
	for _, f := range o.Filenames {
		if f == "" {
			return errors.New("-f/--filename needs a file name (or - for stdin)")
		}
	}
	return nil
}

func (o *Options) runOffline(ctx context.Context) error {
	warnf := func(f string, a ...any) { fmt.Fprintf(o.ErrOut, "warning: "+f+"\n", a...) }
	oo := readstate.OfflineOptions{
		Namespace: explicitNamespace(o.ConfigFlags), Volumes: o.Volumes, Selector: o.Selector, Warnf: warnf,
	}
	off, err := readstate.LoadOffline(ctx, o.Bundle, o.Filenames, o.In, oo)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	skipOrphans := oo.Partial()
	if off.OrphansUnreliable != "" && !skipOrphans {
		warnf("orphan engine checks skipped: %s", off.OrphansUnreliable)
		skipOrphans = true
	}
	st := off.State
	dopts := detect.Options{PendingThreshold: o.PendingThreshold, SkipOrphans: skipOrphans}
	res := detect.Classify(st, dopts)
	detect.AttachLogs(st, &res, logEvidence(off, oo.Partial()), dopts)
	return o.print(st, res, off.Source, off.Incomplete)
}

// explicitNamespace is -n when given: offline, an absent -n lets the input
// decide (longhorn-system if present, else its only Longhorn namespace).
func explicitNamespace(cf *genericclioptions.ConfigFlags) string {
	if cf != nil && cf.Namespace != nil {
		return *cf.Namespace
	}
	return ""
}

// logEvidence converts the loader's evidence; with a volume selection only
// the selected volumes keep theirs.
func logEvidence(off *readstate.Offline, partial bool) map[string]detect.LogEvidence {
	if len(off.Logs) == 0 {
		return nil
	}
	selected := map[string]bool{}
	for i := range off.State.Volumes {
		selected[off.State.Volumes[i].Name] = true
	}
	out := make(map[string]detect.LogEvidence, len(off.Logs))
	for vol, ev := range off.Logs {
		if partial && !selected[vol] {
			continue
		}
		out[vol] = detect.LogEvidence{
			Count: ev.Count, FirstSeen: ev.FirstSeen, LastSeen: ev.LastSeen, Message: ev.Message, Files: ev.Files,
		}
	}
	return out
}

// logColumn renders log evidence for -o wide: "12 (first..last)".
func logColumn(ev *detect.LogEvidence) string {
	if ev == nil || ev.Count == 0 {
		return "-"
	}
	n := strconv.Itoa(ev.Count)
	switch {
	case ev.FirstSeen.IsZero():
		return n
	case ev.FirstSeen.Equal(ev.LastSeen):
		return n + " (" + ev.FirstSeen.UTC().Format(time.RFC3339) + ")"
	}
	return n + " (" + ev.FirstSeen.UTC().Format(time.RFC3339) + ".." + ev.LastSeen.UTC().Format(time.RFC3339) + ")"
}

// LogEvidence is the bundle's log evidence for every volume, in the form
// detect.AttachLogs takes; preflight classifies offline input as scan does.
func LogEvidence(off *readstate.Offline) map[string]detect.LogEvidence {
	return logEvidence(off, false)
}
