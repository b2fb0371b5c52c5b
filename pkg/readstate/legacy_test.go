package readstate_test

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// sequentialLoad is the namespace read as it was before the LISTs ran at
// once and pages were fetched ahead: one resource after the other, one page
// after the other. TestReadPathsAgree compares the two.
func sequentialLoad(ctx context.Context, c *readstate.Client, ns string, pageSize int) (*longhorn.State, error) {
	st := &longhorn.State{Namespace: ns, Now: time.Now()}
	var err error
	if st.Volumes, err = sequentialList[longhorn.Volume](ctx, c, longhorn.Volumes, ns, pageSize); err != nil {
		return nil, err
	}
	if st.Version, st.VersionSource, err = readstate.ReadVersion(ctx, c, ns); err != nil {
		return nil, err
	}
	if st.Engines, err = sequentialList[longhorn.Engine](ctx, c, longhorn.Engines, ns, pageSize); err != nil {
		return nil, err
	}
	if st.Replicas, err = sequentialList[longhorn.Replica](ctx, c, longhorn.Replicas, ns, pageSize); err != nil {
		return nil, err
	}
	if !st.Version.Known() || st.Version.HasVolumeAttachments() {
		st.VolumeAttachments, err = sequentialList[longhorn.VolumeAttachment](ctx, c, longhorn.VolumeAttachments, ns, pageSize)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	if ims, err := sequentialList[longhorn.InstanceManager](ctx, c, longhorn.InstanceManagers, ns, pageSize); err == nil {
		st.InstanceManagers, st.InstanceManagersRead = ims, true
	}
	// Pods and CSI attachments came later; read one after the other too.
	st.Workloads.Pods, st.Workloads.PodsRead, _ = readstate.ReadPods(ctx, c.Dynamic, "")
	st.Workloads.CSIAttachments, st.Workloads.CSIRead, _ = readstate.ReadCSIAttachments(ctx, c.Dynamic)
	return st, nil
}

func sequentialList[T any](ctx context.Context, c *readstate.Client, res longhorn.Resource, ns string, pageSize int) ([]T, error) {
	if pageSize <= 0 {
		pageSize = 500
	}
	var out []T
	cont := ""
	for {
		req := c.REST.Get().Namespace(ns).Resource(res.Plural).Param("limit", strconv.Itoa(pageSize))
		if cont != "" {
			req = req.Param("continue", cont)
		}
		raw, err := req.DoRaw(ctx)
		if err != nil {
			return nil, err
		}
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []T `json:"items"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if cont = page.Metadata.Continue; cont == "" {
			return out, nil
		}
	}
}
