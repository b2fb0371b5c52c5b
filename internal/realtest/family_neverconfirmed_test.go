package realtest

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/kubeserver"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The VM of TestFamilyMigrationNeverConfirmed, as Harvester leaves it on
// Kubernetes: a PVC in vmNS, one virt-launcher pod per node it ran on,
// and the CSI external-attacher's VolumeAttachments.
const (
	vmNS  = "vms"
	vmVMI = "vm-nc"
	vmPVC = "pvc-vm-nc"
	// csiAttacherFinalizer is the finalizer the external-attacher puts on
	// the VolumeAttachments it attached: a delete waits for its detach.
	csiAttacherFinalizer = "external-attacher/driver-longhorn-io"
)

// vmPod is the VM's virt-launcher pod on node.
func vmPod(node string) string { return "virt-launcher-" + vmVMI + "-" + node }

// runVM creates what the kubelet, the scheduler and the CSI
// external-attacher leave for the VM running on node: its virt-launcher pod,
// Running, mounting the PVC, and the storage.k8s.io VolumeAttachment of the
// PV (named vol, as CSI provisions it) to node, attached, with the
// attacher's finalizer. The attachment's name is the attacher's (csi- and
// the hash of PV, driver and node), which is also Longhorn's csi ticket id.
func runVM(ctx context.Context, t *testing.T, c kubernetes.Interface, vol, node string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: vmPod(node), Namespace: vmNS,
			Labels: map[string]string{longhorn.KubeVirtLabel: longhorn.KubeVirtVirtLauncher, longhorn.KubeVirtVMNameLabel: vmVMI},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubevirt.io/v1", Kind: longhorn.KindVMI, Name: vmVMI,
				UID: types.UID("6f1d2a9c-0000-4000-8000-0000000000" + node[len(node)-1:] + "1")}},
		},
		Spec: corev1.PodSpec{
			NodeName:   node,
			Containers: []corev1.Container{{Name: "compute", Image: "registry.suse.com/suse/sles/15.6/virt-launcher:1.4.0"}},
			Volumes: []corev1.Volume{{Name: "disk-0", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: vmPVC}}}},
		},
	}
	got, err := c.CoreV1().Pods(vmNS).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setPodPhase(ctx, t, c, got, corev1.PodRunning)
	if err := testenv.CreateAttachedVA(ctx, c, longhorn.CSITicketID(vol, node), vol, node, csiAttacherFinalizer); err != nil {
		t.Fatal(err)
	}
}

func setPodPhase(ctx context.Context, t *testing.T, c kubernetes.Interface, pod *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	pod.Status.Phase = phase
	if _, err := c.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// neverConfirmedReport is what the test reads of `scan VOL -o json`: the
// report's own finding type (docs/scan-report.md).
type neverConfirmedReport struct {
	Findings []detect.Finding `json:"findings"`
}

// TestFamilyMigrationNeverConfirmed: a live migration that is ready but
// that nothing confirms (longhorn#11149), on Longhorn's own controllers
// (1.5+: the csi tickets are the VolumeAttachment controller's) and on
// Kubernetes' own kube-apiserver, which serves the pods and the
// storage.k8s.io VolumeAttachments the finding rests on. A VM runs on
// node-a and live-migrates to node-b: the CSI driver adds node-b's csi
// ticket and Longhorn makes the migration ready (both engines running, both
// tickets satisfied); scan calls that MigrationInFlight while the VM's pod
// on node-a runs. The source pod then completes, but node-a's attachment
// stays (orphaned), so node-a's csi ticket is never removed: Longhorn stays
// in the ready state by itself, and scan reports MigrationNeverConfirmed
// with the pods, the attachments and the tickets as evidence and the
// maintainers' steps. The first write of those steps, the delete of the
// orphaned attachment as printed, lets the external-attacher detach node-a
// (played: Longhorn's CSI driver removes node-a's csi ticket), and Longhorn
// confirms the migration and settles on node-b with nothing lost. The
// steps after it (stop the VM, wait, start it) are not run: Longhorn has
// settled before them, and stopping the workload is Harvester's, not
// Longhorn's.
func TestFamilyMigrationNeverConfirmed(t *testing.T) {
	t.Parallel()
	var rels []string
	for _, rel := range releasesOrSkip(t) {
		if longhorn.MustParseVersion(rel).HasVolumeAttachments() {
			rels = append(rels, rel)
		}
	}
	testenv.PerRelease(t, rels, func(t *testing.T, rel string) {
		skipUnprovenConfirm(t, rel) // the repair ends in a confirm
		srv := soakServer(t, rel)
		e := newEnvOn(t, rel, srv, kubeserver.Namespace, []string{nodeA, nodeB, nodeC}, envTimeout)
		c := srv.Client()
		const vol = "vol-never-confirmed"
		ticketA, ticketB := longhorn.CSITicketID(vol, nodeA), longhorn.CSITicketID(vol, nodeB)

		// The VM runs on node-a.
		e.attached(vol)
		if err := srv.EnsureNamespace(e.ctx, vmNS); err != nil {
			t.Fatal(err)
		}
		runVM(e.ctx, t, c, vol, nodeA)

		// The VM live-migrates to node-b: its target pod runs there and
		// the CSI driver adds node-b's ticket.
		runVM(e.ctx, t, c, vol, nodeB)
		// Longhorn's kubernetes-pv controller (not run here) records the
		// PVC and the pods using it.
		e.patch(longhorn.Volumes, vol, `{"status":{"kubernetesStatus":{"pvName":"`+vol+`","pvStatus":"Bound","namespace":"`+vmNS+`","pvcName":"`+vmPVC+`",`+
			`"workloadsStatus":[{"podName":"`+vmPod(nodeA)+`","podStatus":"Running","workloadName":"`+vmVMI+`","workloadType":"VirtualMachineInstance"},`+
			`{"podName":"`+vmPod(nodeB)+`","podStatus":"Running","workloadName":"`+vmVMI+`","workloadType":"VirtualMachineInstance"}]}}}`, "status")
		e.attach(vol, nodeB)
		oldEngine, migEngine := e.migrationReady(vol)
		e.await("Longhorn satisfies both csi tickets", func() bool {
			va := e.va(vol)
			return va.Satisfied(ticketA) && va.Satisfied(ticketB)
		})
		scanType := func(out string) string {
			var r neverConfirmedReport
			if json.Unmarshal([]byte(out), &r) != nil || len(r.Findings) != 1 {
				return ""
			}
			return string(r.Findings[0].Type)
		}
		if out, errOut, code := e.plugin("scan", vol, "-o", "json"); scanType(out) != string(detect.TypeMigrationInFlight) {
			t.Errorf("scan while the VM's pod on node-a runs: exit %d, want MigrationInFlight (a VM migration in flight)\n%s%s", code, out, errOut)
		}

		// The VM's migration ends: the source pod completes, but the
		// attachment to node-a is left behind, and with it the csi ticket.
		src, err := c.CoreV1().Pods(vmNS).Get(e.ctx, vmPod(nodeA), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		setPodPhase(e.ctx, t, c, src, corev1.PodSucceeded)
		e.stays("the migration stays ready and unconfirmed", vol, func(v *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
			old, mig := testenv.EngineOn(es, nodeA), testenv.EngineOn(es, nodeB)
			if len(es) != 2 || old == nil || mig == nil || old.Name != oldEngine || mig.Name != migEngine {
				return false
			}
			va := e.va(vol)
			return v.Spec.NodeID == nodeA && v.Spec.MigrationNodeID == nodeB && v.Status.CurrentNodeID == nodeA &&
				old.Spec.Active && !mig.Spec.Active && old.Status.CurrentState == longhorn.StateRunning && mig.Status.CurrentState == longhorn.StateRunning &&
				va.Satisfied(ticketA) && va.Satisfied(ticketB)
		}, "")

		var r neverConfirmedReport
		e.scanUntil("scan reports MigrationNeverConfirmed", vol, func(out, _ string, code int) bool {
			r = neverConfirmedReport{}
			return code == 1 && json.Unmarshal([]byte(out), &r) == nil && len(r.Findings) == 1 &&
				r.Findings[0].Type == detect.TypeMigrationNeverConfirmed
		}, "-o", "json")
		f := r.Findings[0]
		if f.Severity != detect.SeverityWarning || f.Action != detect.ActionNone || f.Keep != oldEngine {
			t.Errorf("scan: severity %q action %q keep %q, want warning, none (fix does not repair it), keep %s", f.Severity, f.Action, f.Keep, oldEngine)
		}
		if !strings.Contains(f.Reason, "no pod using the volume runs on "+nodeA) || !strings.Contains(f.Reason, ticketA+" still attaches the volume to "+nodeA+" (orphaned)") {
			t.Errorf("scan's reason does not name the empty node and the orphaned attachment: %s", f.Reason)
		}
		ev := &f.Evidence
		if ev.NodeID != nodeA || ev.MigrationNodeID != nodeB {
			t.Errorf("evidence: nodeID %q migrationNodeID %q, want %s and %s", ev.NodeID, ev.MigrationNodeID, nodeA, nodeB)
		}
		roles := map[string]string{}
		for _, en := range ev.Engines {
			roles[en.Name] = en.Role + "@" + en.NodeID + ":" + en.State
		}
		if roles[oldEngine] != "keep@"+nodeA+":running" || roles[migEngine] != "migration@"+nodeB+":running" || len(roles) != 2 {
			t.Errorf("evidence engines %v, want %s keep on node-a and %s migration on node-b, both running", roles, oldEngine, migEngine)
		}
		tickets := map[string]string{}
		for _, tk := range ev.Tickets {
			tickets[tk.ID] = tk.Type + "@" + tk.NodeID
			if !tk.Satisfied {
				tickets[tk.ID] += " unsatisfied"
			}
		}
		if want := map[string]string{ticketA: longhorn.AttacherTypeCSI + "@" + nodeA, ticketB: longhorn.AttacherTypeCSI + "@" + nodeB}; !maps.Equal(tickets, want) {
			t.Errorf("evidence tickets %v, want both csi tickets satisfied: %v", tickets, want)
		}
		if w := ev.Workload; w == nil || w.PodsNotChecked != "" || w.CSIAttachmentsNotChecked != "" {
			t.Fatalf("evidence lacks the workload read from Kubernetes: %+v", w)
		}
		pods := map[string]string{}
		for _, p := range ev.Workload.Pods {
			pods[p.Name] = p.Node + ":" + p.Phase + ":" + p.VMI
		}
		if want := map[string]string{vmPod(nodeA): nodeA + ":Succeeded:" + vmVMI, vmPod(nodeB): nodeB + ":Running:" + vmVMI}; !maps.Equal(pods, want) {
			t.Errorf("evidence pods %v, want %v", pods, want)
		}
		attachments := map[string]string{}
		for _, a := range ev.Workload.CSIAttachments {
			attachments[a.Name] = a.Node
			if !a.Attached {
				attachments[a.Name] += " detached"
			}
		}
		if want := map[string]string{ticketA: nodeA, ticketB: nodeB}; !maps.Equal(attachments, want) {
			t.Errorf("evidence attachments %v, want both attached: %v", attachments, want)
		}
		if f.Family == nil {
			t.Fatal("scan's finding has no family part")
		}
		if !strings.Contains(strings.Join(f.Family.Issues, " "), "longhorn/longhorn#11149") {
			t.Errorf("family issues %v lack longhorn#11149", f.Family.Issues)
		}
		if want := between(rel, "1.7.0", "1.7.999"); f.Family.AffectedRelease != want {
			t.Errorf("affectedRelease %t on %s, want %t (reported on 1.7.x)", f.Family.AffectedRelease, rel, want)
		}
		steps := f.Family.Steps
		if len(steps) != 5 || !strings.HasPrefix(steps[0], "kubectl get volumeattachments.storage.k8s.io") || !strings.Contains(steps[0], vol) ||
			!strings.HasPrefix(steps[1], "kubectl delete volumeattachments.storage.k8s.io "+ticketA+" ") ||
			steps[2] != "virtctl stop "+vmVMI+" -n "+vmNS || !strings.Contains(steps[3], "wait until neither attachment is left") ||
			steps[4] != "virtctl start "+vmVMI+" -n "+vmNS {
			t.Fatalf("steps %q, want list, delete %s, virtctl stop, list and wait, virtctl start", steps, ticketA)
		}
		e.runStep(steps[0]) // a read, as printed

		// The repair's first write, as printed: kubectl deletes the
		// orphaned attachment and waits until it is gone. The
		// external-attacher then detaches (played): Longhorn's CSI driver
		// removes node-a's csi ticket, and once the volume has left node-a
		// the attacher removes its finalizer.
		deleted := e.startStep(steps[1])
		e.await("the orphaned attachment is being deleted", func() bool {
			a, err := c.StorageV1().VolumeAttachments().Get(e.ctx, ticketA, metav1.GetOptions{})
			return err == nil && a.DeletionTimestamp != nil
		})
		e.detach(vol, nodeA)
		e.waitFor("Longhorn confirms the migration and settles on node-b", vol, settled(nodeB))
		if _, err := c.StorageV1().VolumeAttachments().Patch(e.ctx, ticketA, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		deleted()
		if _, err := c.StorageV1().VolumeAttachments().Get(e.ctx, ticketA, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the printed delete returned, but the orphaned attachment is still there: %v", err)
		}
		v, es, _ := e.state(vol)
		if es[0].Name != migEngine || v.Status.CurrentMigrationNodeID != "" {
			t.Errorf("after the confirm: engine %s, currentMigrationNodeID %q; want the migration engine %s kept, no migration", es[0].Name, v.Status.CurrentMigrationNodeID, migEngine)
		}
		if va := e.va(vol); len(va.Spec.AttachmentTickets) != 1 || !va.Satisfied(ticketB) {
			t.Errorf("tickets after the confirm: %v, want node-b's csi ticket alone, satisfied", va.Spec.AttachmentTickets)
		}
		e.assertNoDamage(vol)
		if out, errOut, code := e.plugin("scan", vol); code != 0 {
			t.Errorf("scan after the repair: exit %d\n%s%s", code, out, errOut)
		}
	})
}

// startStep starts a step scan printed, as an operator pastes it into a
// shell, and returns a wait for it to succeed: a kubectl delete waits for
// the object's finalizers, which the test plays meanwhile.
func (e *env) startStep(step string) (wait func()) {
	e.t.Helper()
	cmd := exec.CommandContext(e.ctx, "bash", "-c", step)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.c.KubeconfigPath())
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("the printed step %q: %v", step, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return func() {
		e.t.Helper()
		select {
		case err := <-done:
			if err != nil {
				e.t.Fatalf("the printed step %q: %v\n%s", step, err, out.String())
			}
		case <-time.After(waitTimeout):
			e.t.Fatalf("the printed step %q did not return within %s\n%s", step, waitTimeout, out.String())
		}
	}
}
