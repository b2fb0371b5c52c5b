package fix

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// volumeRead is one volume re-read right before acting (or while waiting):
// the typed state detect judges and the same objects, complete, for the
// backup. Both come from one set of requests (readstate.ReadVolume), so the
// backup is exactly what was checked.
type volumeRead struct {
	state   *longhorn.State
	objects []*unstructured.Unstructured // volume, engines, replicas
	found   bool                         // false when the volume is gone
}

// readVolume reads one volume with readstate's per-volume reader.
func readVolume(ctx context.Context, c *readstate.Client, ns, vol string) (*volumeRead, error) {
	r, err := readstate.ReadVolume(ctx, c, ns, vol)
	if err != nil {
		return nil, err
	}
	out := &volumeRead{state: r.State, found: r.Found}
	if !r.Found {
		return out, nil
	}
	raws := append(append([]json.RawMessage{r.Raw.Volume}, r.Raw.Engines...), r.Raw.Replicas...)
	for _, raw := range raws {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, fmt.Errorf("decoding an object of volume %q for the backup: %w", vol, err)
		}
		out.objects = append(out.objects, u)
	}
	return out, nil
}

// Fresh is a plan made from a read of the volume just now, with that read:
// the objects the backup saves are exactly the ones the plan was made from.
type Fresh struct {
	Planned
	read *volumeRead
}

// recheck re-reads the volume and plans again from that read. It returns
// the fresh plan, the one to act on, and a reason to skip ("" when it is
// still the plan).
func (r *Repairer) recheck(ctx context.Context, planned Planned) (*Fresh, string, error) {
	vr, err := readVolume(ctx, r.Client, r.Namespace, planned.Volume)
	if err != nil {
		return nil, "", err
	}
	if !vr.found {
		return nil, "the volume is gone", nil
	}
	fresh := r.planFresh(vr, planned.Volume)
	return fresh, changedSince(planned, fresh.Planned), nil
}

// planFresh plans one volume from a re-read.
func (r *Repairer) planFresh(vr *volumeRead, vol string) *Fresh {
	return &Fresh{Planned: planRead(vr.state, vol, r.Strategy, r.PendingThreshold), read: vr}
}
