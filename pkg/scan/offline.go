package scan

import (
	"context"
	"strconv"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// Offline analysis: --bundle reads a Longhorn support bundle, -f reads
// `kubectl get -o yaml|json` output. Both yield the State a live read
// yields, so detection, the report and the exit codes are the same; the
// bundle's manager logs add evidence after classification.

// readOffline is read from a bundle or files.
func (o *ReadOptions) readOffline(ctx context.Context) (*longhorn.State, detect.Result, string, []string, error) {
	warnf := cmdutil.Warnf(o.ErrOut)
	oo := readstate.OfflineOptions{
		Volumes: o.Volumes, Selector: o.Selector, Warnf: warnf,
	}
	off, err := o.Input.Load(ctx, o.In, o.ConfigFlags, oo)
	if err != nil {
		return nil, detect.Result{}, "", nil, cmdutil.WithCode(cmdutil.ExitNoCheck, err)
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
	return st, res, off.Source, off.Incomplete, nil
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
