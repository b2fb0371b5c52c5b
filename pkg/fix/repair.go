package fix

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/progress"
)

// Repairer runs the per-volume pipeline: re-check, backup, act, wait,
// verify. It is safe for concurrent use on different volumes, and meant to
// be reused by a long-running guard as well as by the fix command.
type Repairer struct {
	Settings
	// Backup receives the objects and the action log; required unless DryRun.
	Backup *Backup
	// ConfigMaps, if set, also receives each backup before its write.
	ConfigMaps *ConfigMapBackup
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
	if !planned.Acts() {
		return staticOutcome(planned)
	}
	if out, ok := r.mayStart(ctx, planned.Volume); !ok {
		return out
	}
	fresh, reason, err := r.recheck(ctx, planned)
	if out, ok := r.recheckFailed(planned.Volume, reason, err); !ok {
		return out
	}
	return r.act(ctx, fresh)
}

// RepairFresh repairs a volume planned by Plan moments ago. The read the
// plan was made from is the re-check: nothing is read again before the
// backup and the first write, which are pinned to that read.
func (r *Repairer) RepairFresh(ctx context.Context, fresh *Fresh) Outcome {
	if !fresh.Acts() {
		return staticOutcome(fresh.Planned)
	}
	if fresh.read == nil {
		// Not made by Plan: there is no read to act on, so re-check first.
		return r.RepairVolume(ctx, fresh.Planned)
	}
	if out, ok := r.mayStart(ctx, fresh.Volume); !ok {
		return out
	}
	return r.act(ctx, fresh)
}

// mayStart refuses to start a volume once the run stopped.
func (r *Repairer) mayStart(ctx context.Context, vol string) (Outcome, bool) {
	out := Outcome{Volume: vol}
	log := r.log()
	if r.Stopped() {
		out.Result, out.Detail = ResultNotAttempted, "not attempted: the run stopped after inverted replica flags on another volume"
		_ = log.Printf("skip volume=%s reason=%q", vol, out.Detail)
		return r.report(out), false
	}
	if ctx.Err() != nil {
		out.Result, out.Detail = ResultNotAttempted, "not attempted: the run was stopped before this volume; nothing written"
		_ = log.Printf("skip volume=%s reason=%q", vol, "stopped: "+context.Cause(ctx).Error())
		return r.report(out), false
	}
	return Outcome{}, true
}

// recheckFailed is the outcome of a re-check that failed or found the plan
// no longer right; ok is true when the repair goes on.
func (r *Repairer) recheckFailed(vol, reason string, err error) (Outcome, bool) {
	out := Outcome{Volume: vol}
	log := r.log()
	switch {
	case err != nil:
		out.Result, out.Detail = ResultFailed, "re-check failed, nothing written: "+err.Error()
		_ = log.Printf("recheck volume=%s error=%q", vol, err.Error())
		return r.report(out), false
	case reason != "":
		out.Result, out.Detail = ResultSkipped, "skipped, nothing written: "+reason
		_ = log.Printf("recheck volume=%s skip reason=%q", vol, reason)
		return r.report(out), false
	}
	return Outcome{}, true
}

// act backs up, writes and verifies from a fresh read: it equals the plan
// in every field the write depends on, and carries the current
// resourceVersions.
func (r *Repairer) act(ctx context.Context, f *Fresh) Outcome {
	fresh, vr := f.Planned, f.read
	out := Outcome{Volume: fresh.Volume}
	log := r.log()
	_ = log.Printf("recheck volume=%s ok keep=%s uid=%s stale=%s action=%s version=%s",
		fresh.Volume, fresh.Keep.Name, fresh.Keep.UID, refsForLog(fresh.Stale), fresh.Action, fresh.Version)

	if r.DryRun == cmdutil.DryRunClient {
		return r.report(clientDryRun(r.Printer, fresh))
	}
	if r.DryRun != cmdutil.DryRunServer {
		if r.Backup == nil {
			out.Result, out.Detail = ResultFailed, "no backup folder: nothing written"
			return r.report(out)
		}
		before := fmt.Sprintf("%s %s; keep %s", fresh.Action, names(fresh.Stale), fresh.Keep.Name)
		if fresh.VolumeWrite() {
			before = fmt.Sprintf("%s (status.currentMigrationNodeID %s)", fresh.Action, fresh.MigrationNodeID)
		}
		header := fmt.Sprintf("kubectl longhorn-engines fix: volume %s in namespace %s, Longhorn %s, read %s\nbefore: %s\nrestore: kubectl create -f <this file> (objects deleted) or kubectl apply -f <this file>",
			fresh.Volume, r.Namespace, fresh.Version, vr.state.Now.UTC().Format(time.RFC3339), before)
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

	if fresh.VolumeWrite() {
		if failed, ok := r.clearMigrationNode(ctx, fresh, &out); !ok {
			return r.report(failed)
		}
	}
	if len(fresh.Replicas) > 0 {
		if failed, ok := r.writeReplicas(ctx, fresh, &out); !ok {
			return r.report(failed)
		}
		if r.DryRun != cmdutil.DryRunServer {
			// Check the flags before Longhorn can act on the engine change:
			// the engine writes follow only on a re-read that shows every
			// replica as written and the rest of the plan unchanged.
			next, failed, ok := r.checkReplicas(ctx, fresh, out)
			if !ok {
				return r.report(failed)
			}
			if fresh.EngineWrites() {
				fresh = next // the engines' current resourceVersions
			}
		}
	}
	if fresh.EngineWrites() {
		if failed, ok := r.writeEngines(ctx, fresh, &out); !ok {
			return r.report(failed)
		}
	}

	switch {
	case r.DryRun == cmdutil.DryRunServer:
		out.Result = ResultDryRun
		out.Detail = fmt.Sprintf("server dry run accepted, nothing persisted: would write %s%s", writesPhrase(fresh.Writes()), keepPhrase(fresh))
		return r.report(out)
	case !r.Wait:
		out.Result = ResultChanged
		out.Detail = fmt.Sprintf("changed %s; not verified (--wait=false): check with 'kubectl longhorn-engines scan %s'", strings.Join(out.Changed, ", "), fresh.Volume)
		_ = log.Printf("verify volume=%s skipped (--wait=false)", fresh.Volume)
		return r.report(out)
	}
	return r.report(r.waitVerified(ctx, fresh, out))
}

// writeReplicas makes the plan's replica writes in order. ok is false when
// the pipeline must stop; the returned outcome then says what was written.
func (r *Repairer) writeReplicas(ctx context.Context, p Planned, out *Outcome) (Outcome, bool) {
	log := r.log()
	for i, w := range p.Replicas {
		if r.Stopped() {
			o := *out
			o.Result, o.Detail = ResultNotAttempted, "stopped after inverted replica flags on another volume"+stopNote(p, o.Changed, i)
			return o, false
		}
		if r.beforeWrite != nil {
			r.beforeWrite(w.Name)
		}
		if o, ok := r.interrupted(ctx, p, "replica "+w.Name, i, out); !ok {
			return o, false
		}
		if err := log.Printf("replica=%s uid=%s resourceVersion=%s engine=%s active=%t to engine=%s active=%t keep=%s dryRun=%s attempt",
			w.Name, w.UID, w.ResourceVersion, w.EngineName, w.Active, w.ToEngine, w.ToActive, p.Keep.Name, r.DryRun); err != nil {
			o := *out
			o.Result, o.Detail = ResultFailed, "action log failed, nothing more written: "+err.Error()+stopNote(p, o.Changed, i)
			return o, false
		}
		err := r.writeReplica(ctx, w)
		if err != nil && r.DryRun == cmdutil.DryRunNone && ambiguous(err) {
			// The answer was lost: read the replica back, never resend.
			outcome, seen := r.readBackReplica(ctx, w)
			_ = log.Printf("replica=%s error=%q readBack=%s seen=%q", w.Name, err.Error(), outcome, seen)
			switch outcome {
			case writeApplied:
				r.Printer.Progress("the answer to the patch of replica %s was lost (%v); read back: %s", w.Name, err, seen)
				err = nil
			case writeNotApplied:
				err = fmt.Errorf("the patch of replica %s failed (%v) and did not happen (read back: %s); it was not retried", w.Name, err, seen)
			default:
				o := *out
				o.Result = ResultFailed
				o.Detail = fmt.Sprintf("the patch of replica %s failed (%v) and may have happened (%s): check with 'kubectl longhorn-engines scan %s' before anything else", w.Name, err, seen, p.Volume) +
					stopNote(p, o.Changed, i)
				return o, false
			}
		} else if err != nil {
			_ = log.Printf("replica=%s error=%q", w.Name, err.Error())
		}
		if err != nil {
			o := *out
			o.Result, o.Detail = ResultFailed, err.Error()+stopNote(p, o.Changed, i)
			return o, false
		}
		_ = log.Printf("replica=%s ok", w.Name)
		if r.afterWrite != nil {
			r.afterWrite(w.Name)
		}
		out.Changed = append(out.Changed, w.Name)
		r.Printer.Changed(longhorn.Replicas, w.Name, replicaChangeText(w), r.DryRun)
	}
	return Outcome{}, true
}

// checkReplicas re-reads the volume after the replica writes: every
// replica must be as written, and for an engine write the plan made from
// this read must be the same action on the same engines with no replica
// left to change. It returns that plan, which carries the engines' current
// resourceVersions for the next writes.
func (r *Repairer) checkReplicas(ctx context.Context, p Planned, out Outcome) (Planned, Outcome, bool) {
	log := r.log()
	fail := func(res Result, why string) (Planned, Outcome, bool) {
		_ = log.Printf("check volume=%s replicas stop reason=%q", p.Volume, why)
		out.Result, out.Detail = res, why+stopNote(p, out.Changed, len(p.Replicas))
		return Planned{}, out, false
	}
	vr, err := readVolume(ctx, r.Client, r.Namespace, p.Volume)
	if err != nil {
		return fail(ResultFailed, "re-read after the replica writes failed, no engine changed: "+err.Error())
	}
	if !vr.found {
		return fail(ResultFailed, "the volume is gone")
	}
	now := map[string]*longhorn.Replica{}
	for i := range vr.state.Replicas {
		now[vr.state.Replicas[i].Name] = &vr.state.Replicas[i]
	}
	for _, w := range p.Replicas {
		x := now[w.Name]
		if !w.ToActive && (x == nil || (string(x.UID) == w.UID && x.DeletionTimestamp != nil && !x.Spec.Active)) {
			// Deactivated, and already being removed by Longhorn (a
			// dangling replica whose directory the survivor uses): done.
			continue
		}
		if x == nil || string(x.UID) != w.UID || x.Spec.EngineName != w.ToEngine || x.Spec.Active != w.ToActive || x.DeletionTimestamp != nil {
			return fail(ResultFailed, fmt.Sprintf("replica %s is not as written (want engine %s active=%t); no engine changed, run fix again", w.Name, w.ToEngine, w.ToActive))
		}
	}
	fresh := r.planFresh(vr, p.Volume).Planned
	if !p.EngineWrites() {
		_ = log.Printf("check volume=%s replicas ok", p.Volume)
		return fresh, Outcome{}, true
	}
	switch {
	case diffEngines(p.Snapshot.Engines, fresh.Snapshot.Engines) != "":
		return fail(ResultSkipped, "after the replica writes, "+diffEngines(p.Snapshot.Engines, fresh.Snapshot.Engines)+"; no engine changed, run fix again")
	case fresh.Action != p.Action || fresh.Keep.UID != p.Keep.UID || names(fresh.Stale) != names(p.Stale):
		return fail(ResultSkipped, fmt.Sprintf("after the replica writes the plan is %s on %q keeping %q (was %s on %q): %s; no engine changed, run fix again",
			fresh.Action, names(fresh.Stale), fresh.Keep.Name, p.Action, names(p.Stale), fresh.Why))
	case len(fresh.Replicas) > 0:
		return fail(ResultFailed, fmt.Sprintf("after the replica writes replica %s still needs a change; no engine changed, run fix again", fresh.Replicas[0].Name))
	}
	_ = log.Printf("check volume=%s replicas ok stale=%s", p.Volume, refsForLog(fresh.Stale))
	return fresh, Outcome{}, true
}

// writeEngines changes the stale engines, each pinned by uid and
// resourceVersion.
func (r *Repairer) writeEngines(ctx context.Context, fresh Planned, out *Outcome) (Outcome, bool) {
	log := r.log()
	for _, e := range fresh.Stale {
		if r.Stopped() {
			o := *out
			o.Result, o.Detail = ResultNotAttempted, "stopped after inverted replica flags on another volume"+stopNote(fresh, o.Changed, len(fresh.Replicas))
			_ = log.Printf("stop volume=%s written=%s", fresh.Volume, orNone(o.Changed))
			return o, false
		}
		if r.beforeWrite != nil {
			r.beforeWrite(e.Name)
		}
		if o, ok := r.interrupted(ctx, fresh, "engine "+e.Name, len(fresh.Replicas), out); !ok {
			return o, false
		}
		if err := log.Printf("%s engine=%s uid=%s resourceVersion=%s node=%s keep=%s dryRun=%s attempt",
			fresh.Action, e.Name, e.UID, e.ResourceVersion, e.NodeID, fresh.Keep.Name, r.DryRun); err != nil {
			o := *out
			o.Result, o.Detail = ResultFailed, "action log failed, nothing more written: "+err.Error()
			return o, false
		}
		err := r.write(ctx, fresh.Action, fresh.Keep, e)
		if err != nil && r.DryRun == cmdutil.DryRunNone && ambiguous(err) {
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
			o := *out
			o.Result, o.Detail = ResultFailed, err.Error()+stopNote(fresh, o.Changed, len(fresh.Replicas))
			return o, false
		}
		_ = log.Printf("%s engine=%s ok", fresh.Action, e.Name)
		if r.afterWrite != nil {
			r.afterWrite(e.Name)
		}
		out.Changed = append(out.Changed, e.Name)
		r.Printer.Changed(longhorn.Engines, e.Name, pastTense(fresh.Action), r.DryRun)
	}
	return Outcome{}, true
}

// interrupted is the outcome at a safe point after a signal: the backup is
// on disk and the write of name (the next-th replica write, or an engine
// write after them all) was not sent. ok is false when the pipeline must
// stop there.
func (r *Repairer) interrupted(ctx context.Context, p Planned, name string, next int, out *Outcome) (Outcome, bool) {
	if ctx.Err() == nil {
		return Outcome{}, true
	}
	o := *out
	o.Result = ResultNotAttempted
	o.Detail = "stopped before writing " + name + stopNote(p, o.Changed, next)
	if o.Backup != "" {
		o.Detail += "; backup kept in " + o.Backup
	}
	_ = r.log().Printf("stop volume=%s before=%s written=%s reason=%q", p.Volume, name, orNone(o.Changed), context.Cause(ctx).Error())
	return o, false
}

// waitVerified polls the volume until verify passes, the flags invert, the
// volume moves on, or the timeout passes. Read errors while waiting are
// reported as progress and retried (progress.Poll): the change is already
// made, only the verification waits.
func (r *Repairer) waitVerified(ctx context.Context, p Planned, out Outcome) Outcome {
	log := r.log()
	interval := r.PollInterval
	if interval <= 0 {
		interval = 2 * time.Second
	}
	start := time.Now()
	wait := r.Printer.Begin(fmt.Sprintf("waiting for volume %q", p.Volume), r.Timeout)
	defer wait.End()
	last, err := progress.Poll(ctx, wait, interval, r.Timeout, func(ctx context.Context) (progress.Look, error) {
		vr, err := readVolume(ctx, r.Client, r.Namespace, p.Volume)
		switch {
		case err != nil:
			return progress.Look{}, err
		case !vr.found:
			return progress.Look{Status: "the volume is gone"}, nil
		}
		engines := progress.Engines(p.Volume, vr.state.Engines)
		verifier := verify
		if p.VolumeWrite() {
			verifier = verifyCleared
		}
		v := verifier(vr.state, p, r.PendingThreshold)
		if v.Inverted {
			r.stopped.Store(true)
			out.Result, out.Recovery = ResultInverted, v.Recovery
			out.Detail = "STOPPED: replica flags inverted after the change: " + v.Status
			_ = log.Printf("verify volume=%s inverted status=%q; stopping all further writes", p.Volume, v.Status)
			return progress.Look{Done: true}, nil
		}
		if v.Done {
			out.Result = ResultRepaired
			out.Detail = "verified: " + v.Status
			_ = log.Printf("verify volume=%s ok after %s status=%q", p.Volume, time.Since(start).Round(time.Millisecond), v.Status)
			return progress.Look{Done: true}, nil
		}
		if why, ok := movedOn(vr.state, p); ok {
			out.Result = ResultSuperseded
			out.Detail = "superseded (the change stays; Longhorn has the volume again): " + why
			_ = log.Printf("verify volume=%s superseded after %s status=%q", p.Volume, time.Since(start).Round(time.Millisecond), why)
			return progress.Look{Done: true}, nil
		}
		return progress.Look{Status: v.Status, Engines: engines}, nil
	})
	if err == nil {
		return out
	}
	out.Result = ResultTimedOut
	if errors.Is(err, context.DeadlineExceeded) {
		out.Detail = fmt.Sprintf("not verified within %s (Longhorn has not finished; the change stays): %s", r.Timeout, last)
	} else {
		out.Detail = "interrupted before verification (the change stays): " + last
	}
	_ = log.Printf("verify volume=%s timeout status=%q", p.Volume, last)
	return out
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
// volume outside a command run (the guard, migrate --fix): RepairFresh then
// acts on that read.
func (r *Repairer) Plan(ctx context.Context, vol string) (*Fresh, error) {
	vr, err := readVolume(ctx, r.Client, r.Namespace, vol)
	if err != nil {
		return nil, err
	}
	if !vr.found {
		return nil, fmt.Errorf("volume %q not found in namespace %q", vol, r.Namespace)
	}
	return r.planFresh(vr, vol), nil
}

// clientDryRun is a client dry run's one output: kubectl's change line for
// each write p would send, and its outcome. Nothing is sent.
func clientDryRun(pr *Printer, p Planned) Outcome {
	ws := p.Writes()
	for _, w := range ws {
		pr.Changed(w.Resource, w.Name, w.Verb, cmdutil.DryRunClient)
	}
	return Outcome{Volume: p.Volume, Result: ResultDryRun, Changed: writeNames(ws),
		Detail: "client dry run, nothing sent: would write " + writesPhrase(ws) + keepPhrase(p)}
}
