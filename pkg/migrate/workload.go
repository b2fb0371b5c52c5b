package migrate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"k8s.io/client-go/dynamic"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// csiDriverName is Longhorn's CSI driver, the attacher of its Kubernetes
// VolumeAttachments.
const csiDriverName = longhorn.CSIDriver

var storageVolumeAttachments = readstate.CSIAttachmentsResource

// usage is whether a Kubernetes workload uses the volume.
//
// Why it matters: when Kubernetes attached the volume, the CSI external-
// attacher owns the attachment (on 1.5+ the csi-attacher tickets are the
// Kubernetes VolumeAttachments under another name). A tool that moves
// the volume under it races the attacher, which may publish again; a stray
// ticket for the old node after a confirm looks like a new migration back.
// Such volumes should move through Kubernetes (e.g. a KubeVirt
// VirtualMachineInstanceMigration); --force accepts the risk.
//
// Evidence, either is enough:
//   - a storage.k8s.io/v1 VolumeAttachment with attacher driver.longhorn.io
//     for the volume's PV (spec.source.persistentVolumeName);
//   - Longhorn's volume status.kubernetesStatus.workloadsStatus listing pods
//     while lastPodRefAt is empty.
//
// If the storage.k8s.io VolumeAttachments cannot be listed (forbidden,
// unreachable), use is undetermined and the careful answer is to refuse
// unless --force. If the API group is not served at all (404), no Kubernetes
// attacher can exist behind these tickets, so Longhorn's kubernetesStatus
// alone decides, and a note says so.
type usage struct {
	inUse      bool
	determined bool
	evidence   []string
	note       string
}

func (u usage) check() check {
	switch {
	case u.inUse:
		return check{Name: "not in use by a workload", Detail: strings.Join(u.evidence, "; ") + " (a migration of a volume in use belongs to Kubernetes, e.g. a VM live migration; --force accepts the risk)"}
	case !u.determined:
		return check{Name: "not in use by a workload", Detail: "could not determine: " + u.note + " (--force accepts the risk)"}
	}
	d := "no Kubernetes VolumeAttachment and no pod uses it"
	if u.note != "" {
		d = u.note
	}
	return check{Name: "not in use by a workload", OK: true, Detail: d}
}

// workloadUse gathers the evidence. The CSI attachments come from
// readstate's reader, the one scan and fix use; any Longhorn CSI
// attachment of the PV counts here, attached or not (the attacher owns it
// either way).
func workloadUse(ctx context.Context, dyn dynamic.Interface, s *snapshot) usage {
	u := usage{determined: true}
	if pods := s.inUseByPods(); len(pods) > 0 {
		u.inUse = true
		u.evidence = append(u.evidence, "Longhorn reports pods using it: "+strings.Join(pods, ", "))
	}
	all, read, err := readstate.ReadCSIAttachments(ctx, dyn)
	var nodes []string
	for _, a := range longhorn.CSIAttachmentsFor(all, s.volume.Name, s.kube.PVName) {
		nodes = append(nodes, a.NodeName)
	}
	sort.Strings(nodes)
	switch {
	case !read.Read && !read.Failed && strings.HasSuffix(read.Note, "not served by this API server"):
		u.note = "storage.k8s.io/v1 VolumeAttachments are not served here, so no Kubernetes attacher owns this volume; Longhorn's kubernetesStatus lists no pod"
	case !read.Read:
		if !u.inUse {
			u.determined = false
			u.note = read.Note
			if err == nil && read.Hint != "" {
				u.note += "; " + read.Hint
			}
		}
	case len(nodes) > 0:
		u.inUse = true
		u.evidence = append(u.evidence, fmt.Sprintf("Kubernetes attached it (volumeattachments.storage.k8s.io for node %s)", strings.Join(nodes, ", ")))
	}
	return u
}
