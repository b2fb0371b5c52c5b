package fix

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/inventory"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
)

// Repairer runs the per-volume pipeline: re-check, backup, act, wait,
// verify. It is safe for concurrent use on different volumes, and meant to
// be reused by a long-running guard as well as by the fix command.
type Repairer struct {
	Client    *inventory.Client
	Namespace string
	Strategy  Strategy
	// DryRun must be DryRunNone (or DryRunServer) for any write to be sent;
	// the zero value sends none.
	DryRun DryRun
	// Wait for §8.5 verification after acting, up to Timeout.
	Wait         bool
	Timeout      time.Duration
	PollInterval time.Duration
	// PendingThreshold is passed to detect.
	PendingThreshold time.Duration
	// Backup receives the objects and the action log; required unless DryRun.
	Backup *Backup
	// ConfigMaps, if set, also receives each backup before its write.
	ConfigMaps *ConfigMapBackup
	// Printer prints the kubectl-style lines and progress.
	Printer *Printer
	// beforeWrite and afterWrite are test hooks around each write.
	beforeWrite, afterWrite func(engine string)

	stopped atomic.Bool
}

// Stopped reports whether a volume ended with inverted replica flags; the
// Repairer then writes nothing more.
func (r *Repairer) Stopped() bool { return r.stopped.Load() }

// RepairVolume repairs one planned volume. It never writes to the engine to
// keep, and it writes nothing unless a re-read right before acting yields
// exactly the plan.
func (r *Repairer) RepairVolume(ctx context.Context, planned Planned) Outcome {
	out := Outcome{Volume: planned.Volume}
	log := r.log()
	if !planned.Acts() {
		return staticOutcome(planned)
	}
	if r.Stopped() {
		out.Result, out.Detail = ResultNotAttempted, "not attempted: the run stopped after inverted replica flags on another volume"
		_ = log.Printf("skip volume=%s reason=%q", planned.Volume, out.Detail)
		return r.report(out)
	}

	if ctx.Err() != nil {
		out.Result, out.Detail = ResultNotAttempted, "not attempted: the run was stopped before this volume; nothing written"
		_ = log.Printf("skip volume=%s reason=%q", planned.Volume, "stopped: "+context.Cause(ctx).Error())
		return r.report(out)
	}
	vr, reason, err := r.recheck(ctx, planned)
	if err != nil {
		out.Result, out.Detail = ResultFailed, "re-check failed, nothing written: "+err.Error()
		_ = log.Printf("recheck volume=%s error=%q", planned.Volume, err.Error())
		return r.report(out)
	}
	if reason != "" {
		out.Result, out.Detail = ResultSkipped, "skipped, nothing written: "+reason
		_ = log.Printf("recheck volume=%s skip reason=%q", planned.Volume, reason)
		return r.report(out)
	}
	// From here on, act on the fresh read: it equals the plan in every field
	// the write depends on, and carries the current resourceVersions.
	fresh := r.planFresh(vr, planned.Volume)
	_ = log.Printf("recheck volume=%s ok keep=%s uid=%s stale=%s action=%s version=%s",
		fresh.Volume, fresh.Keep.Name, fresh.Keep.UID, refsForLog(fresh.Stale), fresh.Action, fresh.Version)

	if r.DryRun == DryRunClient {
		for _, e := range fresh.Stale {
			out.Changed = append(out.Changed, e.Name)
			r.Printer.Changed(longhorn.Engines, e.Name, pastTense(fresh.Action), r.DryRun)
		}
		out.Result, out.Detail = ResultDryRun, "client dry run: nothing sent"
		return r.report(out)
	}
	if r.DryRun != DryRunServer {
		if r.Backup == nil {
			out.Result, out.Detail = ResultFailed, "no backup folder: nothing written"
			return r.report(out)
		}
		header := fmt.Sprintf("kubectl longhorn-engines fix: volume %s in namespace %s, Longhorn %s, read %s\nbefore: %s %s; keep %s\nrestore: kubectl create -f <this file> (objects deleted) or kubectl apply -f <this file>",
			fresh.Volume, r.Namespace, fresh.Version, vr.state.Now.UTC().Format(time.RFC3339), fresh.Action, names(fresh.Stale), fresh.Keep.Name)
		path, err := r.Backup.Save(fresh.Volume, header, vr.objects)
		if err == nil {
			err = log.Printf("backup volume=%s file=%s objects=%d", fresh.Volume, path, len(vr.objects))
		}
		if err != nil {
			out.Result, out.Detail = ResultFailed, "backup failed, nothing written: "+err.Error()
			return r.report(out)
		}
		if r.ConfigMaps != nil {
			name, err := r.ConfigMaps.Save(ctx, fresh.Volume, path, r.Backup.Dir)
			if err == nil {
				err = log.Printf("backup volume=%s configmap=%s/%s", fresh.Volume, r.Namespace, name)
			}
			if err != nil {
				out.Result, out.Detail = ResultFailed, "backup failed, nothing written: "+err.Error()
				return r.report(out)
			}
			path += " and ConfigMap " + r.Namespace + "/" + name
		}
		out.Backup = path
	}

	for _, e := range fresh.Stale {
		if r.Stopped() {
			out.Result, out.Detail = ResultNotAttempted, "stopped after inverted replica flags on another volume; written so far: "+orNone(out.Changed)
			_ = log.Printf("stop volume=%s written=%s", fresh.Volume, orNone(out.Changed))
			return r.report(out)
		}
		if r.beforeWrite != nil {
			r.beforeWrite(e.Name)
		}
		if ctx.Err() != nil {
			// A safe point: the backup is on disk, this write not sent.
			out.Result = ResultNotAttempted
			out.Detail = fmt.Sprintf("stopped before writing engine %s; written so far: %s", e.Name, orNone(out.Changed))
			if out.Backup != "" {
				out.Detail += "; backup kept in " + out.Backup
			}
			_ = log.Printf("stop volume=%s before=%s written=%s reason=%q", fresh.Volume, e.Name, orNone(out.Changed), context.Cause(ctx).Error())
			return r.report(out)
		}
		if err := log.Printf("%s engine=%s uid=%s resourceVersion=%s node=%s keep=%s dryRun=%s attempt",
			fresh.Action, e.Name, e.UID, e.ResourceVersion, e.NodeID, fresh.Keep.Name, r.DryRun); err != nil {
			out.Result, out.Detail = ResultFailed, "action log failed, nothing more written: "+err.Error()
			return r.report(out)
		}
		err := r.write(ctx, fresh.Action, fresh.Keep, e)
		if err != nil && r.DryRun == DryRunNone && ambiguous(err) {
			// The answer was lost: read the engine back, never resend.
			outcome, seen := r.readBack(ctx, fresh.Action, e)
			_ = log.Printf("%s engine=%s error=%q readBack=%s seen=%q", fresh.Action, e.Name, err.Error(), outcome, seen)
			switch outcome {
			case writeApplied:
				r.Printer.Progress("the answer to the %s of engine %s was lost (%v); read back: %s", fresh.Action, e.Name, err, seen)
				err = nil
			case writeNotApplied:
				err = fmt.Errorf("the %s of engine %s failed (%v) and did not happen (read back: %s); it was not retried", fresh.Action, e.Name, err, seen)
			default:
				err = fmt.Errorf("the %s of engine %s failed (%v) and may have happened (%s): check with 'kubectl longhorn-engines scan %s' before anything else", fresh.Action, e.Name, err, seen, fresh.Volume)
			}
		} else if err != nil {
			_ = log.Printf("%s engine=%s error=%q", fresh.Action, e.Name, err.Error())
		}
		if err != nil {
			out.Result = ResultFailed
			out.Detail = err.Error()
			if len(out.Changed) > 0 {
				out.Detail += fmt.Sprintf("; already %s: %s (see %s)", pastTense(fresh.Action), strings.Join(out.Changed, ", "), ActionLogName)
			}
			return r.report(out)
		}
		_ = log.Printf("%s engine=%s ok", fresh.Action, e.Name)
		if r.afterWrite != nil {
			r.afterWrite(e.Name)
		}
		out.Changed = append(out.Changed, e.Name)
		r.Printer.Changed(longhorn.Engines, e.Name, pastTense(fresh.Action), r.DryRun)
	}

	switch {
	case r.DryRun == DryRunServer:
		out.Result = ResultDryRun
		out.Detail = fmt.Sprintf("server dry run accepted: would %s %s and keep %s", fresh.Action, strings.Join(out.Changed, ", "), fresh.Keep.Name)
		return r.report(out)
	case !r.Wait:
		out.Result = ResultChanged
		out.Detail = fmt.Sprintf("%s %s; not verified (--wait=false): check with 'kubectl longhorn-engines scan %s'", pastTense(fresh.Action), strings.Join(out.Changed, ", "), fresh.Volume)
		_ = log.Printf("verify volume=%s skipped (--wait=false)", fresh.Volume)
		return r.report(out)
	}
	return r.report(r.waitVerified(ctx, fresh, out))
}

// waitVerified polls the volume until verify passes, the flags invert, or
// the timeout passes. Read errors while waiting are reported as progress
// and retried: the change is already made, only the verification waits.
func (r *Repairer) waitVerified(ctx context.Context, p Planned, out Outcome) Outcome {
	log := r.log()
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	interval := r.PollInterval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	last := ""
	start := time.Now()
	wait := r.Printer.Begin(fmt.Sprintf("waiting for volume %q", p.Volume), r.Timeout)
	defer wait.End()
	for {
		vr, err := readVolume(ctx, r.Client, r.Namespace, p.Volume)
		status, engines := "", ""
		if err == nil && vr.found {
			engines = progress.Engines(p.Volume, vr.state.Engines)
		}
		switch {
		case err != nil && ctx.Err() == nil:
			status = "cannot read the volume: " + err.Error()
		case err == nil && !vr.found:
			status = "the volume is gone"
		case err == nil:
			v := verify(vr.state, p, r.PendingThreshold)
			status = v.Status
			if v.Inverted {
				r.stopped.Store(true)
				out.Result, out.Recovery = ResultInverted, v.Recovery
				out.Detail = "STOPPED: replica flags inverted after the change: " + v.Status
				_ = log.Printf("verify volume=%s inverted status=%q; stopping all further writes", p.Volume, v.Status)
				return out
			}
			if v.Done {
				out.Result = ResultRepaired
				out.Detail = "verified: " + v.Status
				_ = log.Printf("verify volume=%s ok after %s status=%q", p.Volume, time.Since(start).Round(time.Millisecond), v.Status)
				return out
			}
		}
		if status != "" {
			wait.Update(status, engines)
			last = status
		}
		select {
		case <-ctx.Done():
			out.Result = ResultTimedOut
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				out.Detail = fmt.Sprintf("not verified within %s (Longhorn has not finished; the change stays): %s", r.Timeout, last)
			} else {
				out.Detail = "interrupted before verification (the change stays): " + last
			}
			_ = log.Printf("verify volume=%s timeout status=%q", p.Volume, last)
			return out
		case <-tick.C:
		}
	}
}

func (r *Repairer) log() *ActionLog {
	if r.Backup == nil {
		return nil
	}
	return r.Backup.Log
}

// report prints the outcome line of a volume the pipeline worked on.
func (r *Repairer) report(o Outcome) Outcome {
	r.Printer.Outcome(o)
	return o
}

func refsForLog(es []EngineRef) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s(uid=%s,rv=%s,node=%s)", e.Name, e.UID, e.ResourceVersion, e.NodeID)
	}
	return strings.Join(parts, ",")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// Plan reads one volume now and plans it, for callers that act on a single
// volume outside a command run (a guard that watches for the state).
func (r *Repairer) Plan(ctx context.Context, vol string) (Planned, error) {
	vr, err := readVolume(ctx, r.Client, r.Namespace, vol)
	if err != nil {
		return Planned{}, err
	}
	if !vr.found {
		return Planned{}, fmt.Errorf("volume %q not found in namespace %q", vol, r.Namespace)
	}
	return r.planFresh(vr, vol), nil
}
