package readstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// withPVC gives fixture volume name the PVC default/data.
func withPVC(objs []map[string]any, name string) []map[string]any {
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		if o["kind"] == "Volume" && md["name"] == name {
			st := o["status"].(map[string]any)
			st["kubernetesStatus"] = map[string]any{"namespace": "default", "pvcName": "data", "pvName": name}
		}
	}
	return objs
}

func fxPod(ns, name, node string, claim string, labels map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": fxMeta(ns, name, labels),
		"spec": map[string]any{"nodeName": node, "volumes": []any{
			map[string]any{"name": "disk", "persistentVolumeClaim": map[string]any{"claimName": claim}},
			map[string]any{"name": "tmp", "emptyDir": map[string]any{}},
		}},
		"status": map[string]any{"phase": "Running"},
	}
}

func fxCSI(name, pv, node string) map[string]any {
	return map[string]any{
		"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"attacher": longhorn.CSIDriver, "nodeName": node, "source": map[string]any{"persistentVolumeName": pv}},
		"status":   map[string]any{"attached": true},
	}
}

// A bundle with the PVC's namespace and the storage.k8s.io attachments: the
// pod on node-a (the stuck volume's current node is node-b) refuses the
// repair, from the bundle alone.
func TestBundleWorkloadsPresent(t *testing.T) {
	b := fxBundle()
	b.Objects = append(withPVC(b.Objects, "pvc-stuck"),
		fxPod("default", "virt-launcher-vm1-abcde", "node-a", "data", map[string]any{"kubevirt.io": "virt-launcher", "vm.kubevirt.io/name": "vm1"}),
		fxPod("default", "other", "node-a", "other-claim", nil))
	va, err := testenv.ListYAML("storage.k8s.io/v1", "VolumeAttachment", []map[string]any{fxCSI("csi-0123", "pvc-stuck", "node-a")}, true)
	if err != nil {
		t.Fatal(err)
	}
	b.Extra["yamls/cluster/storage.k8s.io/v1/volumeattachments.yaml"] = va
	dir := t.TempDir()
	zipPath := b.ZipPath(t, dir)
	off, w := loadOK(t, zipPath, OfflineOptions{})
	if len(w.lines) > 0 {
		t.Errorf("warnings:\n%s", w)
	}
	wl := off.State.Workloads
	if !wl.PodsReadIn("default") || wl.PodsReadIn("cattle-system") || !wl.CSIRead.Read {
		t.Fatalf("read statuses: %+v", wl)
	}
	if len(wl.Pods) != 2 || wl.Pods[1].Name != "virt-launcher-vm1-abcde" || !wl.Pods[1].VirtLauncher || wl.Pods[1].VMI != "vm1" || wl.Pods[1].NodeName != "node-a" {
		t.Errorf("pods: %+v", wl.Pods)
	}
	if len(wl.CSIAttachments) != 1 || wl.CSIAttachments[0].PVName != "pvc-stuck" || !wl.CSIAttachments[0].Attached {
		t.Errorf("attachments: %+v", wl.CSIAttachments)
	}
	f, ok := detect.ClassifyVolume(off.State, "pvc-stuck", detect.Options{})
	if !ok {
		t.Fatal("no finding")
	}
	c := f.Check(detect.CheckWorkloadOnCurrentNode)
	if c == nil || c.OK || !strings.Contains(c.Failure, "pod default/virt-launcher-vm1-abcde runs on node-a, not on the current node node-b") {
		t.Errorf("check: %+v", c)
	}
}

// Without them: not checked, saying they are not in the bundle; nothing
// extra is opened (TestLoadBundleOpensOnlyWhatItNeeds).
func TestBundleWorkloadsAbsent(t *testing.T) {
	b := fxBundle()
	b.Objects = withPVC(b.Objects, "pvc-stuck")
	dir := t.TempDir()
	zipPath := b.ZipPath(t, dir)
	off, _ := loadOK(t, zipPath, OfflineOptions{})
	f, ok := detect.ClassifyVolume(off.State, "pvc-stuck", detect.Options{})
	if !ok {
		t.Fatal("no finding")
	}
	c := f.Check(detect.CheckWorkloadOnCurrentNode)
	if c == nil || !c.OK || !c.NotChecked ||
		!strings.Contains(c.Detail, "pods of namespace default not in the bundle") ||
		!strings.Contains(c.Detail, "volumeattachments.storage.k8s.io not in the bundle") {
		t.Errorf("check: %+v", c)
	}
	if w := f.Evidence.Workload; w == nil || w.PodsNotChecked == "" || w.CSIAttachmentsNotChecked == "" {
		t.Errorf("evidence: %+v", w)
	}
}

// Files: kind Pod (v1) and VolumeAttachment (storage.k8s.io/v1) among the
// Longhorn objects are used; without them the check is not done.
func TestFilesWorkloads(t *testing.T) {
	dir := t.TempDir()
	objs := withPVC(fxObjects(fxNS, "v1.4.3"), "pvc-stuck")
	var lh strings.Builder
	for _, o := range objs {
		lh.WriteString("---\n" + toYAML(t, o))
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lhFile := write("longhorn.yaml", lh.String())
	k8sFile := write("k8s.json", toJSON(t, kubectlList([]map[string]any{
		fxPod("default", "app-0", "node-b", "data", nil),
		fxCSI("csi-0123", "pvc-stuck", "node-b"),
	})))

	off, w, err := loadFiles(t, "", lhFile, k8sFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.lines) > 0 {
		t.Errorf("warnings:\n%s", w)
	}
	wl := off.State.Workloads
	if !wl.PodsReadIn("default") || !wl.CSIRead.Read || len(wl.Pods) != 1 || len(wl.CSIAttachments) != 1 {
		t.Fatalf("workloads: %+v", wl)
	}
	f, _ := detect.ClassifyVolume(off.State, "pvc-stuck", detect.Options{})
	if c := f.Check(detect.CheckWorkloadOnCurrentNode); c == nil || !c.OK || c.NotChecked {
		t.Errorf("pod and attachment on the current node: %+v", c)
	}

	off, _, err = loadFiles(t, "", lhFile)
	if err != nil {
		t.Fatal(err)
	}
	f, _ = detect.ClassifyVolume(off.State, "pvc-stuck", detect.Options{})
	c := f.Check(detect.CheckWorkloadOnCurrentNode)
	if c == nil || !c.OK || !c.NotChecked || !strings.Contains(c.Detail, "pods not in the files") {
		t.Errorf("no pods given: %+v", c)
	}
}
