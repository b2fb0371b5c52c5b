package cmd_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// FuzzCommandsEscape: whatever a cluster object or a support bundle holds in
// the text the commands print (a PVC, pod and workload name, a condition
// message, a volume's own name, a manager log line), scan, describe and
// preflight print it escaped, read from files and from a bundle: every output
// line is safetext.Printable.
// make test runs the seeds; make fuzz runs it bounded.
func FuzzCommandsEscape(f *testing.F) {
	for _, s := range []string{"\x1b]0;owned\x07\x1b[2J", "\u009b31m", "\xff\xfe", "a\rb", "\x00", "plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, evil string) {
		dir := t.TempDir()
		objs := evilScenario(evil)
		// JSON, as kubectl get -o json writes it: the YAML encoder of the
		// test helpers refuses some control characters that JSON carries.
		list, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "objects.json")
		if err := os.WriteFile(file, list, 0o644); err != nil {
			t.Fatal(err)
		}
		sources := [][]string{{"-f", file}}
		at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
		bundle := &testenv.Bundle{UID: "fuzz", CreatedAt: at, Objects: objs,
			Logs: map[string]string{"longhorn-system/longhorn-manager-x/longhorn-manager.log": testenv.KubeletPrefix(at,
				testenv.BugLine(testenv.Style151, at, testenv.BundleNamespace, "pvc-stuck", "pvc-stuck-e-1"+evil, "pvc-stuck-e-0", "node-b"+evil)) + "\n"}}
		if zipPath, err := bundle.WriteZip(dir); err == nil {
			sources = append(sources, []string{"--bundle", zipPath})
		} else {
			t.Logf("no bundle for this input (the test's YAML encoder refuses it): %v", err)
		}
		for _, src := range sources {
			for _, args := range [][]string{
				{"scan"}, {"scan", "-o", "wide"}, {"scan", "-o", "yaml"}, {"scan", "-o", "name"},
				{"describe", "pvc-stuck"}, {"preflight"},
			} {
				args = append(append(args, src...), "--color=never")
				if args[0] == "preflight" {
					args = args[:len(args)-1] // preflight never colours
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				r := clitest.New(t, "").Run(ctx, args...)
				cancel()
				out := r.Stdout + r.Stderr
				// safetext's own rule, line by line (tabs are white space here)
				for _, line := range strings.Split(strings.ReplaceAll(out, "\t", " "), "\n") {
					if !safetext.Printable(line) {
						t.Fatalf("%s prints %q raw:\n%q", strings.Join(args, " "), line, out)
					}
				}
				if args[0] != "describe" {
					continue
				}
				// the text was read and printed, escaped, not refused
				if r.Code == 2 {
					t.Fatalf("%s: exit 2:\n%s", strings.Join(args, " "), out)
				}
				if want := safetext.Escape(asRead(t, evil)); len(evil) <= 16 && !strings.Contains(out, want) {
					t.Fatalf("%s: %q is not in the output:\n%s", strings.Join(args, " "), want, out)
				}
			}
		}
	})
}

// evilScenario is the bundle scenario with evil in every text field the
// commands print of the stuck volume, and a volume named after it (never
// pvc-stuck itself).
func evilScenario(evil string) []map[string]any {
	ns := testenv.BundleNamespace
	objs := testenv.BundleScenario(ns, "v1.4.3")
	for _, o := range objs {
		meta := o["metadata"].(map[string]any)
		if o["kind"] != "Volume" || meta["name"] != "pvc-stuck" {
			continue
		}
		st := o["status"].(map[string]any)
		st["kubernetesStatus"] = map[string]any{"namespace": "default" + evil, "pvName": "pvc-stuck", "pvcName": "disk" + evil,
			"workloadsStatus": []any{map[string]any{"podName": "virt-launcher-vm" + evil, "workloadName": "vm" + evil, "workloadType": "VirtualMachineInstance" + evil}}}
		st["conditions"] = []any{map[string]any{"type": "Scheduled", "status": "False", "reason": "ReplicaSchedulingFailure" + evil, "message": "no disk" + evil}}
	}
	return append(objs, testenv.JSONVolume(ns, "pvc-x"+evil, "node-a"))
}

// asRead is s as the commands read it from JSON: invalid UTF-8 becomes
// U+FFFD there.
func asRead(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var out string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
