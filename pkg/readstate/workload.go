package readstate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The Kubernetes resources read to find where a volume's workload runs.
var (
	PodsResource           = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	CSIAttachmentsResource = schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattachments"}
)

// WorkloadsClusterRole is the optional ClusterRole of docs/rbac.md that
// grants these reads.
const WorkloadsClusterRole = "longhorn-engines-workloads"

const workloadsHint = "grant the optional ClusterRole " + WorkloadsClusterRole + " (" + docs.RBAC + ") to check where the workload runs"

// ReadPods lists pods in ns ("" for every namespace), page by page. It never
// fails: a read that did not happen is a ReadStatus saying why, and err is
// the error worth a warning (nil for forbidden and not served, which the
// status explains).
func ReadPods(ctx context.Context, dyn dynamic.Interface, ns string) ([]longhorn.Pod, longhorn.ReadStatus, error) {
	return readOptional(ctx, dyn.Resource(PodsResource).Namespace(ns), "pod", "pods", (*podObject).pod)
}

// ReadCSIAttachments lists the storage.k8s.io/v1 VolumeAttachments (every
// attacher; Matching keeps Longhorn's), with ReadPods' rules for errors.
func ReadCSIAttachments(ctx context.Context, dyn dynamic.Interface) ([]longhorn.CSIAttachment, longhorn.ReadStatus, error) {
	return readOptional(ctx, dyn.Resource(CSIAttachmentsResource), "volumeattachment.storage.k8s.io", "volumeattachments.storage.k8s.io", (*csiAttachmentObject).attachment)
}

// readOptional is a read that never fails (ReadPods' rules): listConverted,
// and a failed list (what names the resource) as a degraded ReadStatus.
func readOptional[O, T any](ctx context.Context, ri dynamic.ResourceInterface, kind, what string, conv func(*O) T) ([]T, longhorn.ReadStatus, error) {
	out, err := listConverted(ctx, ri, kind, conv)
	if err != nil {
		st, warn := degraded(err, what)
		return nil, st, warn
	}
	return out, longhorn.ReadStatus{Read: true}, nil
}

// listConverted is listPages for a kind decoded into O, the few fields
// read, each item then converted into T; kind names it in a decode error.
func listConverted[O, T any](ctx context.Context, ri dynamic.ResourceInterface, kind string, conv func(*O) T) ([]T, error) {
	return listPages(ctx, ri, func(u map[string]any) (T, error) {
		var o O
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, &o); err != nil {
			var zero T
			return zero, fmt.Errorf("decoding a %s: %w", kind, err)
		}
		return conv(&o), nil
	})
}

// degraded turns a failed list into a ReadStatus. Forbidden and not served
// are expected (the permission is optional; the test API server and some
// proxies serve only CRDs) and explained by the status alone; anything else
// also comes back as a warning and marks the status Failed.
func degraded(err error, what string) (longhorn.ReadStatus, error) {
	switch {
	case apierrors.IsForbidden(err):
		return longhorn.ReadStatus{Note: "cannot list " + what + " (forbidden)", Hint: workloadsHint}, nil
	case apierrors.IsNotFound(err):
		return longhorn.ReadStatus{Note: what + " are not served by this API server",
			Hint: "read from an API server that serves " + what}, nil
	}
	line := strings.Join(strings.Fields(err.Error()), " ")
	st := longhorn.ReadStatus{Failed: true, Note: "cannot list " + what + " (" + line + ")", Hint: "retry; a repair is refused until the read succeeds"}
	return st, fmt.Errorf("%s not read, where workloads run is not checked: %s", what, line)
}

// listPages pages through a LIST with limit/continue (ListAll's pattern)
// and decodes page by page, restarting once from the beginning when a
// continue token expired.
func listPages[T any](ctx context.Context, ri dynamic.ResourceInterface, decode func(map[string]any) (T, error)) ([]T, error) {
	opts := metav1.ListOptions{Limit: DefaultPageSize}
	restarted := false
	var out []T
	for {
		l, err := ri.List(ctx, opts)
		if err != nil {
			if opts.Continue != "" && !restarted && isExpired(err) {
				restarted, opts.Continue, out = true, "", nil
				continue
			}
			return nil, err
		}
		for i := range l.Items {
			x, err := decode(l.Items[i].Object)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// podObject is the part of a Pod that is decoded.
type podObject struct {
	Metadata struct {
		Namespace       string            `json:"namespace,omitempty"`
		Name            string            `json:"name,omitempty"`
		Labels          map[string]string `json:"labels,omitempty"`
		OwnerReferences []struct {
			Kind       string `json:"kind,omitempty"`
			Name       string `json:"name,omitempty"`
			Controller *bool  `json:"controller,omitempty"`
		} `json:"ownerReferences,omitempty"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName,omitempty"`
		Volumes  []struct {
			PersistentVolumeClaim *struct {
				ClaimName string `json:"claimName,omitempty"`
			} `json:"persistentVolumeClaim,omitempty"`
		} `json:"volumes,omitempty"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase,omitempty"`
	} `json:"status"`
}

func (o *podObject) pod() longhorn.Pod {
	m := &o.Metadata
	p := longhorn.Pod{Namespace: m.Namespace, Name: m.Name, NodeName: nullToEmpty(o.Spec.NodeName), Phase: o.Status.Phase}
	for _, v := range o.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "" {
			p.Claims = append(p.Claims, v.PersistentVolumeClaim.ClaimName)
		}
	}
	for i, r := range m.OwnerReferences {
		if i == 0 || (r.Controller != nil && *r.Controller) {
			p.OwnerKind, p.OwnerName = r.Kind, r.Name
		}
		if r.Kind == longhorn.KindVMI && p.VMI == "" {
			p.VMI = r.Name
		}
	}
	p.VirtLauncher = m.Labels[longhorn.KubeVirtLabel] == longhorn.KubeVirtVirtLauncher
	if p.VMI == "" && p.VirtLauncher {
		p.VMI = m.Labels[longhorn.KubeVirtVMNameLabel]
	}
	return p
}

// csiAttachmentObject is the part of a storage.k8s.io VolumeAttachment that
// is decoded.
type csiAttachmentObject struct {
	Metadata struct {
		Name string `json:"name,omitempty"`
	} `json:"metadata"`
	Spec struct {
		Attacher string `json:"attacher,omitempty"`
		NodeName string `json:"nodeName,omitempty"`
		Source   struct {
			PersistentVolumeName *string `json:"persistentVolumeName,omitempty"`
		} `json:"source"`
	} `json:"spec"`
	Status struct {
		Attached bool `json:"attached,omitempty"`
	} `json:"status"`
}

func (o *csiAttachmentObject) attachment() longhorn.CSIAttachment {
	a := longhorn.CSIAttachment{Name: o.Metadata.Name, Attacher: o.Spec.Attacher, NodeName: nullToEmpty(o.Spec.NodeName), Attached: o.Status.Attached}
	if o.Spec.Source.PersistentVolumeName != nil {
		a.PVName = *o.Spec.Source.PersistentVolumeName
	}
	return a
}

// nullToEmpty undoes support-bundle-kit's "null" for an empty string.
func nullToEmpty(s string) string {
	if s == "null" {
		return ""
	}
	return s
}

// decodeWorkloadObject decodes a Pod or a storage.k8s.io VolumeAttachment
// read offline (bundle or files) into w.
func decodeWorkloadObject(raw []byte, kind string, w *longhorn.Workloads) error {
	switch kind {
	case "Pod":
		var p podObject
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		w.Pods = append(w.Pods, p.pod())
	case "VolumeAttachment":
		var a csiAttachmentObject
		if err := json.Unmarshal(raw, &a); err != nil {
			return err
		}
		w.CSIAttachments = append(w.CSIAttachments, a.attachment())
	}
	return nil
}

// readWorkloads reads what a named-volume read needs: the pods of the PVC
// namespaces of vols (one list each) and, unless csi is given, the CSI
// attachments, all at once. The request count depends on the number of
// namespaces named, never on the size of the cluster.
func readWorkloads(ctx context.Context, dyn dynamic.Interface, vols []longhorn.Volume, csi *csiRead) longhorn.Workloads {
	var w longhorn.Workloads
	if dyn == nil {
		return noClient()
	}
	nss := map[string]bool{}
	for i := range vols {
		if ns := vols[i].Status.KubernetesStatus.Namespace; ns != "" {
			nss[ns] = true
		}
	}
	names := longhorn.SortedKeys(nss)
	var (
		wg       sync.WaitGroup
		podLists = make([][]longhorn.Pod, len(names))
		podSts   = make([]longhorn.ReadStatus, len(names))
	)
	for i, ns := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			podLists[i], podSts[i], _ = ReadPods(ctx, dyn, ns)
		}()
	}
	if csi == nil {
		csi = &csiRead{}
		wg.Add(1)
		go func() { defer wg.Done(); csi.run(ctx, dyn) }()
	}
	wg.Wait()
	w.PodsRead, w.PodNamespaces = longhorn.ReadStatus{Read: true}, nss
	for i := range names {
		if !podSts[i].Read {
			w.PodsRead, w.PodNamespaces, w.Pods = podSts[i], nil, nil
			break
		}
		w.Pods = append(w.Pods, podLists[i]...)
	}
	w.CSIAttachments, w.CSIRead = csi.items, csi.status
	sortWorkloads(&w)
	return w
}

// WarnWorkloads reports, through warnf, reads of pods or CSI attachments
// that failed for a reason other than a permission or an API not served:
// those are explained in every finding; a failure is worth a warning.
func WarnWorkloads(w *longhorn.Workloads, warnf func(string, ...any)) {
	for _, r := range []longhorn.ReadStatus{w.PodsRead, w.CSIRead} {
		if r.Failed {
			warnf("%s: where workloads run is not checked and repairs are refused", r.Note)
		}
	}
}

// csiRead is one ReadCSIAttachments, run alongside other reads.
type csiRead struct {
	items  []longhorn.CSIAttachment
	status longhorn.ReadStatus
}

func (r *csiRead) run(ctx context.Context, dyn dynamic.Interface) {
	r.items, r.status, _ = ReadCSIAttachments(ctx, dyn)
}

// readAllWorkloads reads every pod of the cluster and every CSI attachment
// at once: one paginated LIST each, for a namespace scan.
func readAllWorkloads(ctx context.Context, dyn dynamic.Interface) longhorn.Workloads {
	if dyn == nil {
		return noClient()
	}
	var (
		w   longhorn.Workloads
		wg  sync.WaitGroup
		csi csiRead
	)
	wg.Add(2)
	go func() { defer wg.Done(); w.Pods, w.PodsRead, _ = ReadPods(ctx, dyn, metav1.NamespaceAll) }()
	go func() { defer wg.Done(); csi.run(ctx, dyn) }()
	wg.Wait()
	w.CSIAttachments, w.CSIRead = csi.items, csi.status
	sortWorkloads(&w)
	return w
}

// sortWorkloads orders pods by namespace/name and attachments by name, so
// that reports do not depend on the order of the reads.
func sortWorkloads(w *longhorn.Workloads) {
	sort.SliceStable(w.Pods, func(i, j int) bool {
		a, b := &w.Pods[i], &w.Pods[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	sort.SliceStable(w.CSIAttachments, func(i, j int) bool { return w.CSIAttachments[i].Name < w.CSIAttachments[j].Name })
}

func noClient() longhorn.Workloads {
	st := longhorn.ReadStatus{Note: "not read (no Kubernetes client)"}
	return longhorn.Workloads{PodsRead: st, CSIRead: st}
}
