package longhorn

// Workloads is what the plugin reads of Kubernetes itself, beyond Longhorn's
// own objects: the pods and the CSI VolumeAttachments that say where a
// volume's workload really runs. Longhorn's status.currentNodeID is only
// Longhorn's belief; a repair that keeps the engine on that node must not
// run when the workload is somewhere else.
//
// Reading them is optional (the plugin may lack the permission, a bundle
// may not hold them): PodsRead and CSIRead say whether they were read and,
// when not, why.
type Workloads struct {
	Pods []Pod
	// PodsRead says whether pods were read. PodNamespaces, when not nil,
	// are the only namespaces whose pods were read (a named-volume read
	// lists the PVC's namespace only; a bundle holds a few namespaces).
	PodsRead      ReadStatus
	PodNamespaces map[string]bool
	// PodNamespacesNote says why a namespace's pods are missing when
	// PodNamespaces leaves it out ("not in the bundle").
	PodNamespacesNote string

	CSIAttachments []CSIAttachment
	CSIRead        ReadStatus
}

// ReadStatus says whether one kind of object was read.
type ReadStatus struct {
	// Read is true when the objects were read (an empty list included).
	Read bool
	// Failed is true when the read failed for a reason other than a missing
	// permission or an API that is not served (a 500, a timeout): what
	// depends on it must not pass.
	Failed bool
	// Note says why it was not read ("cannot list pods (forbidden)").
	Note string
	// Hint says what to do about it.
	Hint string
}

// PodsReadIn reports whether the pods of namespace ns were read.
func (w *Workloads) PodsReadIn(ns string) bool {
	return w.PodsRead.Read && (w.PodNamespaces == nil || w.PodNamespaces[ns])
}

// Pod is the part of a core/v1 Pod the plugin reads.
type Pod struct {
	Namespace string
	Name      string
	// NodeName is spec.nodeName ("" while unscheduled).
	NodeName string
	// Phase is status.phase (Pending, Running, Succeeded, Failed, Unknown).
	Phase string
	// Claims are spec.volumes[].persistentVolumeClaim.claimName.
	Claims []string
	// OwnerKind and OwnerName are the controller owner reference (else the first).
	OwnerKind string
	OwnerName string
	// VirtLauncher is true for a KubeVirt virt-launcher pod (label
	// kubevirt.io=virt-launcher); VMI is its VirtualMachineInstance.
	VirtLauncher bool
	VMI          string
}

// Pod phases that matter here.
const (
	PodSucceeded = "Succeeded"
	PodFailed    = "Failed"
)

// Terminal reports a pod that has finished and holds no volume any more.
func (p *Pod) Terminal() bool { return p.Phase == PodSucceeded || p.Phase == PodFailed }

// KubeVirt's labels and owner kind.
const (
	KubeVirtLabel        = "kubevirt.io"
	KubeVirtVirtLauncher = "virt-launcher"
	KubeVirtVMNameLabel  = "vm.kubevirt.io/name"
	KindVMI              = "VirtualMachineInstance"
)

// CSIDriver is Longhorn's CSI driver, the attacher of its storage.k8s.io
// VolumeAttachments.
const CSIDriver = "driver.longhorn.io"

// CSIAttachment is the part of a storage.k8s.io/v1 VolumeAttachment the
// plugin reads. It is not Longhorn's VolumeAttachment.
type CSIAttachment struct {
	Name     string
	Attacher string
	// PVName is spec.source.persistentVolumeName.
	PVName   string
	NodeName string
	Attached bool
}

// PodsOf are the pods that use volume v: in the namespace of its PVC
// (status.kubernetesStatus.namespace), mounting that PVC or named in
// status.kubernetesStatus.workloadsStatus. Terminal pods are included; the
// caller decides what they mean.
func (w *Workloads) PodsOf(v *Volume) []Pod {
	ks := &v.Status.KubernetesStatus
	if ks.Namespace == "" {
		return nil
	}
	named := map[string]bool{}
	for _, ws := range ks.WorkloadsStatus {
		if ws.PodName != "" {
			named[ws.PodName] = true
		}
	}
	var out []Pod
	for _, p := range w.Pods {
		if p.Namespace != ks.Namespace {
			continue
		}
		use := named[p.Name]
		for _, c := range p.Claims {
			if ks.PVCName != "" && c == ks.PVCName {
				use = true
			}
		}
		if use {
			out = append(out, p)
		}
	}
	return out
}

// CSIAttachmentsOf are Longhorn's CSI attachments (attacher
// driver.longhorn.io) of volume v: for its PV (status.kubernetesStatus.pvName)
// or the volume name, which is the PV name of a CSI-provisioned volume.
func (w *Workloads) CSIAttachmentsOf(v *Volume) []CSIAttachment {
	return CSIAttachmentsFor(w.CSIAttachments, v.Name, v.Status.KubernetesStatus.PVName)
}

// CSIAttachmentsFor keeps Longhorn's CSI attachments of any of the PV names.
func CSIAttachmentsFor(all []CSIAttachment, pvNames ...string) []CSIAttachment {
	var out []CSIAttachment
	for _, a := range all {
		if a.Attacher != CSIDriver || a.PVName == "" {
			continue
		}
		for _, pv := range pvNames {
			if pv != "" && a.PVName == pv {
				out = append(out, a)
				break
			}
		}
	}
	return out
}
