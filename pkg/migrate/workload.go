package migrate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// csiDriverName is Longhorn's CSI driver, the attacher of its Kubernetes
// VolumeAttachments.
const csiDriverName = "driver.longhorn.io"

var storageVolumeAttachments = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattachments"}

// usage is whether a Kubernetes workload uses the volume.
//
// Why it matters: when Kubernetes attached the volume, the CSI external-
// attacher owns the attachment (on 1.5+ the csi-attacher tickets are the
// Kubernetes VolumeAttachments under another name, §5). A tool that moves
// the volume under it races the attacher, which may publish again; a stray
// ticket for the old node after a confirm looks like a new migration back
// (§6.5 caveats). Such volumes should move through Kubernetes (e.g. a
// KubeVirt VirtualMachineInstanceMigration); --force accepts the risk.
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

// workloadUse gathers the evidence.
func workloadUse(ctx context.Context, dyn dynamic.Interface, s *snapshot) usage {
	u := usage{determined: true}
	if pods := s.inUseByPods(); len(pods) > 0 {
		u.inUse = true
		u.evidence = append(u.evidence, "Longhorn reports pods using it: "+strings.Join(pods, ", "))
	}
	pv := map[string]bool{s.volume.Name: true}
	if s.kube.PVName != "" {
		pv[s.kube.PVName] = true
	}
	nodes, err := kubernetesAttachments(ctx, dyn, pv)
	switch {
	case apierrors.IsNotFound(err):
		u.note = "storage.k8s.io/v1 VolumeAttachments are not served here, so no Kubernetes attacher owns this volume; Longhorn's kubernetesStatus lists no pod"
	case err != nil:
		if !u.inUse {
			u.determined = false
			u.note = fmt.Sprintf("cannot list volumeattachments.storage.k8s.io (%s)", oneLine(err))
		}
	case len(nodes) > 0:
		u.inUse = true
		u.evidence = append(u.evidence, fmt.Sprintf("Kubernetes attached it (volumeattachments.storage.k8s.io for node %s)", strings.Join(nodes, ", ")))
	}
	return u
}

// kubernetesAttachments returns the nodes of Longhorn CSI VolumeAttachments
// for any of the PV names, paging like kubectl.
func kubernetesAttachments(ctx context.Context, dyn dynamic.Interface, pv map[string]bool) ([]string, error) {
	var nodes []string
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := dyn.Resource(storageVolumeAttachments).List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range l.Items {
			o := l.Items[i].Object
			attacher, _, _ := unstructured.NestedString(o, "spec", "attacher")
			name, _, _ := unstructured.NestedString(o, "spec", "source", "persistentVolumeName")
			node, _, _ := unstructured.NestedString(o, "spec", "nodeName")
			if attacher == csiDriverName && pv[name] {
				nodes = append(nodes, node)
			}
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			break
		}
	}
	sort.Strings(nodes)
	return nodes, nil
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
