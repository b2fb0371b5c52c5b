package fix

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// deactivatePatch is a JSON patch whose test operations make the server
// refuse it unless the engine is still the same object (uid), unchanged
// since the re-check (resourceVersion) and still active. The server applies
// the tests and the replace atomically against the stored object.
func deactivatePatch(e EngineRef) []byte {
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": e.UID},
		{"op": "test", "path": "/metadata/resourceVersion", "value": e.ResourceVersion},
		{"op": "test", "path": "/spec/active", "value": true},
		{"op": "replace", "path": "/spec/active", "value": false},
	}
	b, err := json.Marshal(ops)
	if err != nil {
		panic(err) // maps of strings and bools always marshal
	}
	return b
}

// replicaPatch sets a replica's spec.active and spec.engineName, refused by
// the server unless the replica is the same object, unchanged since the
// read, still with the flags it was planned from, and not being deleted
// (a deletionTimestamp always comes with a new resourceVersion).
func replicaPatch(w ReplicaWrite) []byte {
	ops := []map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": w.UID},
		{"op": "test", "path": "/metadata/resourceVersion", "value": w.ResourceVersion},
		{"op": "test", "path": "/spec/engineName", "value": w.EngineName},
	}
	// spec.active may be absent when false (omitempty writers): add sets it
	// either way, after a test only when it was true.
	if w.Active {
		ops = append(ops, map[string]any{"op": "test", "path": "/spec/active", "value": true})
	}
	ops = append(ops,
		map[string]any{"op": "add", "path": "/spec/active", "value": w.ToActive},
		map[string]any{"op": "replace", "path": "/spec/engineName", "value": w.ToEngine})
	b, err := json.Marshal(ops)
	if err != nil {
		panic(err) // maps of strings and bools always marshal
	}
	return b
}

// writeReplica changes one replica, pinned as replicaPatch says.
func (r *Repairer) writeReplica(ctx context.Context, w ReplicaWrite) error {
	if w.UID == "" || w.ResourceVersion == "" || w.Deleting {
		return fmt.Errorf("refusing to write replica %s: it is being deleted or is not pinned by uid and resourceVersion", w.Name)
	}
	dry, err := r.sentDryRun("replica", w.Name)
	if err != nil {
		return err
	}
	ri := r.Client.Dynamic.Resource(longhorn.Replicas.GVR()).Namespace(r.Namespace)
	_, err = ri.Patch(ctx, w.Name, types.JSONPatchType, replicaPatch(w), metav1.PatchOptions{DryRun: dry, FieldManager: r.FieldManager})
	return explainReplicaWrite(err, w, r.Namespace)
}

// sentDryRun is the dryRun option of a write fix sends. A client dry run
// prints its writes and never reaches one: refused here as a last guard.
func (r *Repairer) sentDryRun(kind, name string) ([]string, error) {
	if r.DryRun != cmdutil.DryRunNone && r.DryRun != cmdutil.DryRunServer {
		return nil, fmt.Errorf("refusing to write %s %s with --dry-run=%s", kind, name, r.DryRun)
	}
	return r.DryRun.Sent(), nil
}

func explainReplicaWrite(err error, w ReplicaWrite, ns string) error {
	return explainPinned(err, "patch", longhorn.Replicas, "replica", w.Name, w.UID, w.ResourceVersion, ns)
}

// replicaChangeText describes a replica write for kubectl-style lines.
func replicaChangeText(w ReplicaWrite) string {
	if w.ToEngine != w.EngineName {
		return "repointed to " + w.ToEngine
	}
	if w.ToActive {
		return "activated"
	}
	return "deactivated"
}

// write changes one stale engine. It refuses, before any request, to touch
// the engine to keep.
func (r *Repairer) write(ctx context.Context, action detect.Action, keep, e EngineRef) error {
	if e.Name == keep.Name || e.UID == keep.UID || e.UID == "" || e.ResourceVersion == "" {
		return fmt.Errorf("refusing to write engine %s: it is the engine to keep or is not pinned by uid and resourceVersion", e.Name)
	}
	dry, err := r.sentDryRun("engine", e.Name)
	if err != nil {
		return err
	}
	ri := r.Client.Dynamic.Resource(longhorn.Engines.GVR()).Namespace(r.Namespace)
	verb := "patch"
	switch action {
	case detect.ActionDeactivate:
		_, err = ri.Patch(ctx, e.Name, types.JSONPatchType, deactivatePatch(e), metav1.PatchOptions{DryRun: dry, FieldManager: r.FieldManager})
	case detect.ActionDelete:
		verb = "delete"
		uid := types.UID(e.UID)
		err = ri.Delete(ctx, e.Name, metav1.DeleteOptions{DryRun: dry,
			Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &e.ResourceVersion}})
	default:
		return fmt.Errorf("no write for action %q", action)
	}
	return explainWrite(err, verb, e, r.Namespace)
}

func explainWrite(err error, verb string, e EngineRef, ns string) error {
	return explainPinned(err, verb, longhorn.Engines, "engine", e.Name, e.UID, e.ResourceVersion, ns)
}

// explainPinned words a refused write pinned to an object's uid and
// resourceVersion: a failed precondition or patch test means the object
// moved after the re-check, and nothing was written.
func explainPinned(err error, verb string, res longhorn.Resource, kind, name, uid, rv, ns string) error {
	if err == nil {
		return nil
	}
	code := 0
	if s, ok := err.(apierrors.APIStatus); ok {
		code = int(s.Status().Code)
	}
	switch {
	case apierrors.IsConflict(err), code == http.StatusUnprocessableEntity:
		return fmt.Errorf("the server refused to %s %s %s: it changed after the re-check (uid %s, resourceVersion %s no longer current); nothing was written: %s",
			verb, kind, name, uid, rv, statusMessage(err))
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s %s is gone: nothing was written", kind, name)
	}
	return cmdutil.Explain(err, verb, res.GroupResource(), ns)
}

func statusMessage(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok && s.Status().Message != "" {
		return s.Status().Message
	}
	return err.Error()
}

// pastTense is the verb of the kubectl-style line.
func pastTense(a detect.Action) string {
	if a == detect.ActionDelete {
		return "deleted"
	}
	return "deactivated"
}
