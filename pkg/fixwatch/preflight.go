package fixwatch

import (
	"context"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// probeEngine is the name the permission probes use. The probes are server
// dry runs that also carry an impossible uid precondition: even if an engine
// of this name existed, nothing could be changed.
const (
	probeEngine = "longhorn-engines-guard-permission-probe"
	probeUID    = "00000000-0000-0000-0000-000000000000"
)

// preflight asks the API server, before the guard starts, for every
// permission the run will need, so that a missing verb is one clear line
// now rather than a failed repair hours into an upgrade: list and watch on
// each watched resource, and the write verbs of the action this Longhorn
// version and strategy call for.
func preflight(ctx context.Context, c *readstate.Client, ns string, watched []longhorn.Resource, writes []string) error {
	for _, r := range watched {
		ri := c.Dynamic.Resource(r.GVR()).Namespace(ns)
		l, err := ri.List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return cmdutil.Explain(err, "list", r.GroupResource(), ns)
		}
		timeout := int64(1)
		w, err := ri.Watch(ctx, metav1.ListOptions{ResourceVersion: l.GetResourceVersion(), TimeoutSeconds: &timeout})
		switch {
		case err == nil:
			w.Stop()
		case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
			// The list's resourceVersion already expired: the server
			// allowed the watch; the informers re-list.
		default:
			return cmdutil.Explain(err, "watch", r.GroupResource(), ns)
		}
	}
	engines := c.Dynamic.Resource(longhorn.Engines.GVR()).Namespace(ns)
	for _, verb := range writes {
		var err error
		switch verb {
		case "patch":
			test := []byte(`[{"op":"test","path":"/metadata/uid","value":"` + probeUID + `"}]`)
			_, err = engines.Patch(ctx, probeEngine, types.JSONPatchType, test, metav1.PatchOptions{DryRun: cmdutil.DryRunServer.Sent()})
		case "delete":
			uid := types.UID(probeUID)
			err = engines.Delete(ctx, probeEngine, metav1.DeleteOptions{DryRun: cmdutil.DryRunServer.Sent(), Preconditions: &metav1.Preconditions{UID: &uid}})
		}
		if err != nil && !allowed(err) {
			return cmdutil.Explain(err, verb, longhorn.Engines.GroupResource(), ns)
		}
	}
	if len(writes) > 0 {
		// Every repair patches replica flags before any engine write.
		test := []byte(`[{"op":"test","path":"/metadata/uid","value":"` + probeUID + `"}]`)
		_, err := c.Dynamic.Resource(longhorn.Replicas.GVR()).Namespace(ns).Patch(ctx, probeEngine, types.JSONPatchType, test, metav1.PatchOptions{DryRun: cmdutil.DryRunServer.Sent()})
		if err != nil && !allowed(err) {
			return cmdutil.Explain(err, "patch", longhorn.Replicas.GroupResource(), ns)
		}
	}
	return nil
}

// allowed: the request passed authorization and failed later, as the probe
// must (no such engine, or the precondition).
func allowed(err error) bool {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err) {
		return true
	}
	if s, ok := err.(apierrors.APIStatus); ok && s.Status().Code == http.StatusUnprocessableEntity {
		return true
	}
	return false
}

// writeVerbs are the verbs on engines a repair needs for this version and
// strategy (detect's release table, narrowed by the strategy): none when
// nothing is repaired on this release or nothing is sent. Any write also
// needs patch on replicas (preflight checks it): the flags are set before an
// engine is changed.
func writeVerbs(v longhorn.Version, s fix.Strategy, dry cmdutil.DryRun) []string {
	if dry == cmdutil.DryRunClient {
		return nil
	}
	var verbs []string
	for _, a := range s.EngineActions(v) {
		switch a {
		case detect.ActionDeactivate:
			verbs = append(verbs, "patch")
		case detect.ActionDelete:
			verbs = append(verbs, "delete")
		}
	}
	return verbs
}
