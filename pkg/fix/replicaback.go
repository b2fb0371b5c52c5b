package fix

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// readBackReplica re-reads a replica after a patch whose answer was lost,
// as readBack does for engines: the patch is never sent again.
func (r *Repairer) readBackReplica(ctx context.Context, w ReplicaWrite) (writeOutcome, string) {
	u, err := r.readBackObject(ctx, longhorn.Replicas, w.Name)
	switch {
	case apierrors.IsNotFound(err) || (err == nil && string(u.GetUID()) != w.UID):
		return writeNotApplied, "the replica is gone (deleted by someone else)"
	case err != nil:
		return writeUnknown, "reading it back failed too: " + err.Error()
	}
	active, _, _ := unstructured.NestedBool(u.Object, "spec", "active")
	engine, _, _ := unstructured.NestedString(u.Object, "spec", "engineName")
	now := fmt.Sprintf("spec.engineName=%s spec.active=%t, resourceVersion %s", engine, active, u.GetResourceVersion())
	switch {
	case engine == w.ToEngine && active == w.ToActive && u.GetResourceVersion() != w.ResourceVersion:
		return writeApplied, now
	case u.GetResourceVersion() == w.ResourceVersion:
		return writeNotApplied, "unchanged: " + now
	}
	// Changed, but not to what fix wrote: someone else wrote it.
	return writeNotApplied, "changed by someone else: " + now
}

// stopNote says, after a stop in the middle of a volume's writes, what was
// written, what was not, and what is safe to do next. next is the index of
// the first replica write not known to be done (len(p.Replicas) once they
// all are).
func stopNote(p Planned, changed []string, next int) string {
	var notWritten []string
	for _, w := range p.Replicas[min(next, len(p.Replicas)):] {
		notWritten = append(notWritten, "replica "+w.Name+" ("+replicaChangeText(w)+")")
	}
	if p.EngineWrites() {
		for _, e := range p.Stale {
			if !containsName(changed, e.Name) {
				notWritten = append(notWritten, "engine "+e.Name+" (still active)")
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "; written: %s; not written: %s", orNone(changed), orNone(notWritten))
	staleActive := p.EngineWrites() && len(p.Stale) > 0 && !containsName(changed, p.Stale[0].Name)
	switch {
	case len(changed) == 0:
		b.WriteString("; the volume is as it was")
	case staleActive:
		fmt.Fprintf(&b, "; while %s stays active Longhorn changes nothing on this volume, so it is safe to leave: run 'kubectl longhorn-engines fix %s' again to finish, and do not delete or deactivate %s by hand before that (%s)",
			names(p.Stale), p.Volume, names(p.Stale), ActionLogName)
	default:
		fmt.Fprintf(&b, "; run 'kubectl longhorn-engines scan %s' and then 'kubectl longhorn-engines fix %s' again (%s)", p.Volume, p.Volume, ActionLogName)
	}
	return b.String()
}

func containsName(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
