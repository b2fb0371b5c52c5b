package fix

import "github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"

// Result is how one selected volume ended.
type Result string

const (
	// ResultHealthy: nothing to do, the volume was healthy.
	ResultHealthy Result = "healthy"
	// ResultInFlight: Longhorn is working on the volume (migration in
	// flight, confirm finishing, brief pending cleanup); fix leaves it alone.
	ResultInFlight Result = "in-flight"
	// ResultRefused: the volume needs attention but no action is safe.
	ResultRefused Result = "refused"
	// ResultSkipped: the volume changed between the plan and the act, or a
	// precondition failed on the re-read; nothing was written.
	ResultSkipped Result = "skipped"
	// ResultFailed: a read, the backup or a write failed.
	ResultFailed Result = "failed"
	// ResultRepaired: acted and verified.
	ResultRepaired Result = "repaired"
	// ResultChanged: acted, not verified (--wait=false).
	ResultChanged Result = "changed"
	// ResultTimedOut: acted, not verified before --timeout.
	ResultTimedOut Result = "timed-out"
	// ResultSuperseded: acted; before the change could be verified the
	// volume moved on (it was detached, or a migration started or finished
	// on an engine that did not exist at the plan), so the state that was
	// repaired is gone.
	// Not verified, so not OK: a new look (scan, or the guard at once)
	// judges the volume as it is now.
	ResultSuperseded Result = "superseded"
	// ResultInverted: replica flags inverted after a change; everything stopped.
	ResultInverted Result = "inverted"
	// ResultDryRun: the action was printed (client) or accepted by the
	// server without being persisted (server).
	ResultDryRun Result = "dry-run"
	// ResultOverdue: Longhorn should be finishing the volume by itself (a
	// pending clean-up) but has taken too long; fix does not act, a person
	// must look. Not OK: exit 1, as scan's warning.
	ResultOverdue Result = "overdue"
	// ResultNotAttempted: the run stopped before this volume.
	ResultNotAttempted Result = "not-attempted"
)

// OK tells whether the result leaves the volume as the user wants it (or,
// for a dry run, shows that the real run would act).
func (r Result) OK() bool {
	switch r {
	case ResultHealthy, ResultInFlight, ResultRepaired, ResultChanged, ResultDryRun:
		return true
	}
	return false
}

// Outcome is the result for one volume with its explanation.
type Outcome struct {
	Volume string
	Result Result
	Detail string
	// Changed lists the engines written (or, in a dry run, that would be).
	Changed []string
	// Backup is the file with the objects as they were before the write.
	Backup string
	// Recovery holds manual steps after inverted replica flags.
	Recovery []string
}

// exitCode folds the outcomes into the command's exit code.
func exitCode(outs []Outcome) int {
	code := cmdutil.ExitOK
	for _, o := range outs {
		switch {
		case o.Result == ResultInverted:
			return cmdutil.ExitAttention
		case !o.Result.OK():
			code = cmdutil.ExitNeedsAction
		}
	}
	return code
}

// staticOutcome is the result of a volume the plan does not act on.
func staticOutcome(p Planned) Outcome {
	o := Outcome{Volume: p.Volume, Detail: p.Why}
	if p.Finding != nil && p.Finding.Overdue() {
		// The words scan and describe use: Longhorn's to finish, overdue.
		o.Result, o.Detail = ResultOverdue, p.Finding.Decision()
		return o
	}
	switch {
	case p.Finding == nil:
		o.Result = ResultHealthy
	case !p.Finding.Severity.NeedsAttention():
		o.Result = ResultInFlight
	default:
		o.Result = ResultRefused
	}
	return o
}

// short replaces the detail of a volume the plan leaves alone with a
// pointer to the plan, which already says why.
func (o Outcome) short() Outcome {
	switch o.Result {
	case ResultHealthy:
		o.Detail = "nothing to do"
	case ResultInFlight:
		o.Detail = "Longhorn is still working on it, nothing to do (see Why above)"
	case ResultRefused:
		o.Detail = "no safe action, nothing written (see Why above)"
	}
	return o
}
