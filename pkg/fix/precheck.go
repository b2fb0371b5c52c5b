package fix

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/inventory"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// volumeRead is one volume re-read right before acting (or while waiting):
// the typed state detect judges and the same objects, complete, for the
// backup. Both come from one set of requests, so the backup is exactly what
// was checked.
type volumeRead struct {
	state   *longhorn.State
	objects []*unstructured.Unstructured // volume, engines, replicas
	found   bool                         // false when the volume is gone
}

// readVolume GETs the volume and lists its engines and replicas with the
// label longhorn-manager itself uses (longhornvolume=<vol>), plus the
// version setting and, on 1.5+, the volume's attachment tickets.
func readVolume(ctx context.Context, c *inventory.Client, ns, vol string) (*volumeRead, error) {
	ver, src, err := inventory.ReadVersion(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	st := &longhorn.State{Namespace: ns, Version: ver, VersionSource: src, Now: time.Now()}
	out := &volumeRead{state: st}

	u, err := c.Dynamic.Resource(longhorn.Volumes.GVR()).Namespace(ns).Get(ctx, vol, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return out, nil
	case err != nil:
		return nil, cmdutil.Explain(err, "get", longhorn.Volumes.GroupResource(), ns)
	}
	out.found = true
	out.objects = append(out.objects, u)
	var v longhorn.Volume
	if err := fromUnstructured(u, &v); err != nil {
		return nil, err
	}
	st.Volumes = []longhorn.Volume{v}

	sel := labels.Set{longhorn.VolumeLabel: vol}.AsSelector().String()
	engines, err := c.Dynamic.Resource(longhorn.Engines.GVR()).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, cmdutil.Explain(err, "list", longhorn.Engines.GroupResource(), ns)
	}
	for i := range engines.Items {
		var e longhorn.Engine
		if err := fromUnstructured(&engines.Items[i], &e); err != nil {
			return nil, err
		}
		st.Engines = append(st.Engines, e)
		out.objects = append(out.objects, &engines.Items[i])
	}
	replicas, err := c.Dynamic.Resource(longhorn.Replicas.GVR()).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, cmdutil.Explain(err, "list", longhorn.Replicas.GroupResource(), ns)
	}
	for i := range replicas.Items {
		var r longhorn.Replica
		if err := fromUnstructured(&replicas.Items[i], &r); err != nil {
			return nil, err
		}
		st.Replicas = append(st.Replicas, r)
		out.objects = append(out.objects, &replicas.Items[i])
	}
	if !ver.Known() || ver.HasVolumeAttachments() {
		va, err := inventory.Get[longhorn.VolumeAttachment](ctx, c, longhorn.VolumeAttachments, ns, vol)
		switch {
		case err == nil:
			st.VolumeAttachments = []longhorn.VolumeAttachment{*va}
		case apierrors.IsNotFound(err):
		default:
			return nil, cmdutil.Explain(err, "get", longhorn.VolumeAttachments.GroupResource(), ns)
		}
	}
	return out, nil
}

// recheck re-reads the volume and plans again from that read. It returns the
// fresh read, and a reason to skip ("" when the plan still holds).
func (r *Repairer) recheck(ctx context.Context, planned Planned) (*volumeRead, string, error) {
	vr, err := readVolume(ctx, r.Client, r.Namespace, planned.Volume)
	if err != nil {
		return nil, "", err
	}
	if !vr.found {
		return vr, "the volume is gone", nil
	}
	fresh := r.planFresh(vr, planned.Volume)
	return vr, changedSince(planned, fresh), nil
}

// planFresh plans one volume from a re-read.
func (r *Repairer) planFresh(vr *volumeRead, vol string) Planned {
	f, ok := detect.ClassifyVolume(vr.state, vol, detect.Options{PendingThreshold: r.PendingThreshold, SkipOrphans: true})
	var fp *detect.Finding
	if ok {
		fp = &f
	}
	return planVolume(vr.state, vol, fp, r.Strategy)
}

// fromUnstructured decodes through JSON: the typed model keeps raw JSON for
// some fields, which the reflection converter does not handle.
func fromUnstructured(u *unstructured.Unstructured, into any) error {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("decoding %s %q: %w", u.GetKind(), u.GetName(), err)
	}
	return nil
}
