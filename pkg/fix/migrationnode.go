package fix

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The repair of a stale status.currentMigrationNodeID (StaleMigrationNodeID,
// docs/troubleshooting-migration-family.md): one write, the KB's status
// patch, made a JSON patch whose tests pin it to the volume read right
// before it. Nothing else is written; no engine or replica is touched.

// VolumeWrite reports whether the plan writes the volume itself (its
// status.currentMigrationNodeID) rather than engines and replicas.
func (p *Planned) VolumeWrite() bool { return p.Action == detect.ActionClearMigrationNode }

// migrationNodeWrite is the plan's one write, as Writes lists it.
func (p Planned) migrationNodeWrite() Write {
	return Write{Resource: longhorn.Volumes, Name: p.Volume, Verb: "patched",
		Fields: fmt.Sprintf("status.currentMigrationNodeID: %s -> \"\" (status subresource)", p.MigrationNodeID)}
}

// clearMigrationNodePatch is refused by the server unless the volume is the
// same object (uid), unchanged since the re-check (resourceVersion) and
// still carries the stale value; the tests and the replace are applied
// atomically against the stored object.
func clearMigrationNodePatch(uid, rv, cm string) []byte {
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": uid},
		{"op": "test", "path": "/metadata/resourceVersion", "value": rv},
		{"op": "test", "path": "/status/currentMigrationNodeID", "value": cm},
		{"op": "replace", "path": "/status/currentMigrationNodeID", "value": ""},
	}
	b, err := json.Marshal(ops)
	if err != nil {
		panic(err) // maps of strings always marshal
	}
	return b
}

// writeMigrationNode sends the patch on the status subresource.
func (r *Repairer) writeMigrationNode(ctx context.Context, p Planned) error {
	s := p.Snapshot
	if s.VolumeUID == "" || s.VolumeResourceVersion == "" || p.MigrationNodeID == "" {
		return fmt.Errorf("refusing to write volume %s: it is not pinned by uid and resourceVersion", p.Volume)
	}
	dry, err := r.sentDryRun("volume", p.Volume)
	if err != nil {
		return err
	}
	ri := r.Client.Dynamic.Resource(longhorn.Volumes.GVR()).Namespace(r.Namespace)
	_, err = ri.Patch(ctx, p.Volume, types.JSONPatchType, clearMigrationNodePatch(s.VolumeUID, s.VolumeResourceVersion, p.MigrationNodeID),
		metav1.PatchOptions{DryRun: dry, FieldManager: r.FieldManager}, "status")
	return explainPinned(err, "patch", longhorn.Volumes, "volume", p.Volume, s.VolumeUID, s.VolumeResourceVersion, r.Namespace)
}

// readBackMigrationNode re-reads the volume after a patch whose answer was
// lost: the patch is never sent again.
func (r *Repairer) readBackMigrationNode(ctx context.Context, p Planned) (writeOutcome, string) {
	u, err := r.readBackObject(ctx, longhorn.Volumes, p.Volume)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && string(u.GetUID()) != p.Snapshot.VolumeUID):
		return writeNotApplied, "the volume is gone (deleted by someone else)"
	case err != nil:
		return writeUnknown, "reading it back failed too: " + err.Error()
	}
	cm, _, _ := unstructured.NestedString(u.Object, "status", "currentMigrationNodeID")
	now := fmt.Sprintf("status.currentMigrationNodeID=%q, resourceVersion %s", cm, u.GetResourceVersion())
	switch {
	case cm == "":
		return writeApplied, now
	case cm == p.MigrationNodeID && u.GetResourceVersion() == p.Snapshot.VolumeResourceVersion:
		return writeNotApplied, "unchanged: " + now
	}
	// Set again, or to another node: whether fix's write landed first
	// cannot be told.
	return writeUnknown, "changed since: " + now
}

// clearMigrationNode makes the plan's one write. ok is false when the
// pipeline must stop; the returned outcome then says what happened.
func (r *Repairer) clearMigrationNode(ctx context.Context, p Planned, out *Outcome) (Outcome, bool) {
	log := r.log()
	fail := func(res Result, detail string) (Outcome, bool) {
		o := *out
		o.Result, o.Detail = res, detail
		return o, false
	}
	if r.beforeWrite != nil {
		r.beforeWrite(p.Volume)
	}
	if ctx.Err() != nil {
		_ = log.Printf("stop volume=%s before=volume written=none reason=%q", p.Volume, context.Cause(ctx).Error())
		d := "stopped before writing volume " + p.Volume + "; nothing written, the volume is as it was"
		if out.Backup != "" {
			d += "; backup kept in " + out.Backup
		}
		return fail(ResultNotAttempted, d)
	}
	if err := log.Printf("%s volume=%s uid=%s resourceVersion=%s currentMigrationNodeID=%s dryRun=%s attempt",
		p.Action, p.Volume, p.Snapshot.VolumeUID, p.Snapshot.VolumeResourceVersion, p.MigrationNodeID, r.DryRun); err != nil {
		return fail(ResultFailed, "action log failed, nothing written: "+err.Error())
	}
	err := r.writeMigrationNode(ctx, p)
	if err != nil && r.DryRun == cmdutil.DryRunNone && ambiguous(err) {
		outcome, seen := r.readBackMigrationNode(ctx, p)
		_ = log.Printf("%s volume=%s error=%q readBack=%s seen=%q", p.Action, p.Volume, err.Error(), outcome, seen)
		switch outcome {
		case writeApplied:
			r.Printer.Progress("the answer to the patch of volume %s was lost (%v); read back: %s", p.Volume, err, seen)
			err = nil
		case writeNotApplied:
			err = fmt.Errorf("the patch of volume %s failed (%v) and did not happen (read back: %s); it was not retried; run 'kubectl longhorn-engines fix %s' again",
				p.Volume, err, seen, p.Volume)
		default:
			err = fmt.Errorf("the patch of volume %s failed (%v) and may have happened (%s): check with 'kubectl longhorn-engines scan %s' before anything else",
				p.Volume, err, seen, p.Volume)
		}
	} else if err != nil {
		_ = log.Printf("%s volume=%s error=%q", p.Action, p.Volume, err.Error())
	}
	if err != nil {
		return fail(ResultFailed, err.Error())
	}
	_ = log.Printf("%s volume=%s ok", p.Action, p.Volume)
	if r.afterWrite != nil {
		r.afterWrite(p.Volume)
	}
	out.Changed = append(out.Changed, p.Volume)
	r.Printer.Changed(longhorn.Volumes, p.Volume, "patched", r.DryRun)
	return Outcome{}, true
}

// verifyCleared judges a read after the write: the field is empty and
// detect finds nothing left that needs a person (a detached volume with
// nothing wrong is not a finding at all).
func verifyCleared(st *longhorn.State, p Planned, threshold time.Duration) verdict {
	v := st.Volume(p.Volume)
	if v == nil {
		return verdict{Status: "the volume is gone"}
	}
	status := fmt.Sprintf("volume %s, status.currentMigrationNodeID %q", orDash(v.Status.State), v.Status.CurrentMigrationNodeID)
	if v.Status.CurrentMigrationNodeID != "" {
		return verdict{Status: status + " (not cleared)"}
	}
	f, found := detect.ClassifyVolume(st, p.Volume, detect.Options{PendingThreshold: threshold, SkipOrphans: true})
	if found && (f.Type == detect.TypeStaleMigrationNodeID || f.Severity.NeedsAttention()) {
		return verdict{Status: fmt.Sprintf("%s (%s: %s)", status, f.Type, f.Reason)}
	}
	return verdict{Done: true, Status: status + ", no finding left"}
}

// keepPhrase ends an outcome's detail with the engine kept, when there is
// one (a volume write keeps no engine in particular).
func keepPhrase(p Planned) string {
	if p.Keep.Name == "" {
		return ""
	}
	return "; keep engine " + p.Keep.Name
}
