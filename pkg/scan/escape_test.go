package scan_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// Text from the cluster or a bundle never reaches the terminal raw: a
// workload name, a PVC name, a condition message and a volume name that
// carry escape sequences (set the title, clear the screen, colour the rest)
// print escaped through scan, describe and preflight, in every format.
func TestCommandsEscapeClusterText(t *testing.T) {
	ns := testenv.BundleNamespace
	objs := testenv.BundleScenario(ns, "v1.4.3")
	const evil = "\x1b]0;owned\x07\x1b[2J"
	for _, o := range objs {
		meta := o["metadata"].(map[string]any)
		if o["kind"] != "Volume" || meta["name"] != "pvc-stuck" {
			continue
		}
		st := o["status"].(map[string]any)
		st["kubernetesStatus"] = map[string]any{"namespace": "default", "pvName": "pvc-stuck", "pvcName": "disk" + evil,
			"workloadsStatus": []any{map[string]any{"podName": "virt-launcher-vm" + evil, "workloadName": "vm" + evil, "workloadType": "VirtualMachineInstance"}}}
		st["conditions"] = []any{map[string]any{"type": "Scheduled", "status": "False", "reason": "ReplicaSchedulingFailure", "message": "no disk" + evil}}
	}
	objs = append(objs, testenv.JSONVolume(ns, "pvc-\x1b[31mred", "node-a"))
	var b bytes.Buffer
	for _, o := range objs {
		b.WriteString("---\n")
		b.Write(testenv.KubectlYAML(t, o))
	}
	file := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"scan", "-f", file},
		{"scan", "-f", file, "-o", "wide"},
		{"scan", "-f", file, "-o", "yaml"},
		{"scan", "-f", file, "-o", "name"},
		{"describe", "pvc-stuck", "-f", file},
		{"preflight", "-f", file},
	} {
		if args[0] != "preflight" { // preflight never colours
			args = append(args, "--color=never")
		}
		r := offRun(t, args...)
		out := r.Stdout + r.Stderr
		if strings.ContainsAny(out, "\x1b\x07") {
			t.Errorf("%s prints raw escape sequences:\n%q", strings.Join(args, " "), out)
		}
		if !strings.Contains(out, `\u001b`) {
			t.Errorf("%s: the escaped text is missing:\n%s", strings.Join(args, " "), out)
		}
	}
}
