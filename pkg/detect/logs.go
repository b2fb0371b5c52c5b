package detect

import (
	"fmt"
	"sort"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// AttachLogs merges log evidence (volume name -> evidence, from offline
// analysis of longhorn-manager logs) into a result after classification:
// every finding of a volume gets its evidence, and a volume with evidence
// but no finding gets a TypeSyncErrorInLogs finding, so an error in the logs
// is never hidden by objects that look healthy. st is the state res was
// classified from; volumes absent from it are reported too (deleted since,
// or not in the snapshot).
//
// Severity: a warning, except on releases with the #6642 fix when the
// errors lasted no longer than opts.PendingThreshold: there, the BUG error
// shows up briefly after every confirm, while the old engine is deleted but
// still active (docs/troubleshooting-two-active-engines.md, "Log lines"),
// so it is info.
func AttachLogs(st *longhorn.State, res *Result, logs map[string]LogEvidence, opts Options) {
	if len(logs) == 0 {
		return
	}
	if opts.PendingThreshold <= 0 {
		opts.PendingThreshold = DefaultPendingThreshold
	}
	covered := map[string]bool{}
	for i := range res.Findings {
		f := &res.Findings[i]
		if ev, ok := logs[f.Volume]; ok {
			ev := ev
			f.Evidence.Logs = &ev
			covered[f.Volume] = true
		}
	}
	var idx *index
	for _, vol := range longhorn.SortedKeys(logs) {
		if covered[vol] {
			continue
		}
		ev := logs[vol]
		f := Finding{Volume: vol, Type: TypeSyncErrorInLogs, Severity: SeverityWarning, Stale: []string{}, Action: ActionNone}
		v := st.Volume(vol)
		where := "the volume is not among the objects read (deleted since, or in another namespace)"
		if v != nil {
			if idx == nil {
				idx = newIndex(st)
			}
			f.Evidence = evidence(st, v, idx.engines[vol], idx.replicas[vol], idx.vas[vol])
			where = "but its objects show no second active engine: the state changed between those lines and the snapshot (a repair, or a finished confirm); check the live volume"
			res.Healthy--
		} else {
			f.Evidence.Engines, f.Evidence.Replicas = []EngineEvidence{}, []ReplicaEvidence{}
		}
		if cls := st.Version.Class(); v != nil && (cls == longhorn.ClassL14f || cls == longhorn.ClassL15f) && !ev.FirstSeen.IsZero() &&
			ev.LastSeen.Sub(ev.FirstSeen) <= opts.PendingThreshold {
			f.Severity = SeverityInfo
			where = fmt.Sprintf("and its objects are healthy now: on Longhorn %s this error is expected for a moment after each migration confirm, while the old engine is deleted but still active", st.Version)
		}
		f.Evidence.Logs = &ev
		f.Reason = fmt.Sprintf("longhorn-manager logged %q %d time(s)%s, %s", ev.Message, ev.Count, logSpan(ev), where)
		res.Findings = append(res.Findings, f)
	}
	sort.SliceStable(res.Findings, func(i, j int) bool { return res.Findings[i].Volume < res.Findings[j].Volume })
}

func logSpan(ev LogEvidence) string {
	switch {
	case ev.FirstSeen.IsZero():
		return ""
	case ev.FirstSeen.Equal(ev.LastSeen):
		return " at " + ev.FirstSeen.UTC().Format(time.RFC3339)
	}
	return " from " + ev.FirstSeen.UTC().Format(time.RFC3339) + " to " + ev.LastSeen.UTC().Format(time.RFC3339)
}
