package scan_test

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
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

// Offline scans through the real command tree. No API client is built, so
// no cluster is needed: the kubeconfig is empty.

func offRun(t *testing.T, args ...string) clitest.Result {
	return clitest.New(t, "").Timeout(time.Minute).Run(context.Background(), args...)
}

func offReport(t *testing.T, r clitest.Result) scan.Report {
	t.Helper()
	var rep scan.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("report does not parse: %v\n%s", err, r)
	}
	return rep
}

func offFinding(rep scan.Report, vol string) *detect.Finding {
	for i := range rep.Findings {
		if rep.Findings[i].Volume == vol {
			return &rep.Findings[i]
		}
	}
	return nil
}

// scenarioBundle is the fixture bundle: pvc-stuck in the #6642 state on
// 1.4.3, pvc-ok healthy, pvc-logonly healthy in objects but BUG in logs.
func offScenarioBundle() *testenv.Bundle {
	return &testenv.Bundle{
		CreatedAt: testenv.BundleCreated,
		Objects:   testenv.BundleScenario(testenv.BundleNamespace, "v1.4.3"),
		Logs:      testenv.ManagerLogs(testenv.BundleNamespace, 5),
	}
}

func TestScanBundle(t *testing.T) {
	b := offScenarioBundle()
	dir := t.TempDir()
	zipPath, folder := b.WriteZipAndDir(t, dir)
	for _, path := range []string{zipPath, folder} {
		t.Run(filepath.Ext(path)+"table", func(t *testing.T) {
			r := offRun(t, "scan", "--bundle", path)
			if r.Code != 1 {
				t.Fatalf("exit %d, want 1 (findings)\n%s", r.Code, r)
			}
			lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			if len(lines) != 3 || !strings.HasPrefix(lines[0], "VOLUME") || strings.Contains(lines[0], "LOGS") {
				t.Fatalf("table:\n%s", r.Stdout)
			}
			for _, want := range [][]string{
				{"pvc-logonly", "SyncErrorInLogs", "warning", "none", "longhorn-manager logged"},
				{"pvc-stuck", "MultipleActiveEngines", "critical", "e-bbbb2222@node-b", "e-aaaa1111@node-a", "deactivate"},
			} {
				if !offRowHas(lines, want...) {
					t.Errorf("no row with %q:\n%s", want, r.Stdout)
				}
			}
			if strings.Contains(r.Stdout, "pvc-ok") {
				t.Errorf("healthy volume listed:\n%s", r.Stdout)
			}
			if !strings.Contains(r.Stderr, "3 volume(s) checked in namespace longhorn-system, Longhorn v1.4.3: 1 healthy, 2 finding(s), 2 need attention, 1 repairable") ||
				strings.Contains(r.Stderr, "warning:") {
				t.Errorf("stderr:\n%s", r.Stderr)
			}
		})
	}

	t.Run("wide shows the log evidence", func(t *testing.T) {
		r := offRun(t, "scan", "--bundle", zipPath, "-o", "wide")
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		if r.Code != 1 || !strings.Contains(lines[0], "LOGS") {
			t.Fatalf("%s", r)
		}
		first := testenv.BugLinesAt.Add(-time.Minute).Format(time.RFC3339)
		last := testenv.BugLinesAt.Add(time.Hour).Format(time.RFC3339)
		if !offRowHas(lines, "pvc-stuck", "3 ("+first+".."+last+")") {
			t.Errorf("pvc-stuck row without its log column:\n%s", r.Stdout)
		}
		if !offRowHas(lines, "pvc-logonly", "1 (") {
			t.Errorf("pvc-logonly row without its log column:\n%s", r.Stdout)
		}
	})

	t.Run("json carries the evidence", func(t *testing.T) {
		r := offRun(t, "scan", "--bundle", zipPath, "-o", "json")
		if r.Code != 1 || r.Stderr != "" {
			t.Fatalf("%s", r)
		}
		rep := offReport(t, r)
		if rep.Source != "bundle:"+zipPath || rep.LonghornVersion != "v1.4.3" || rep.VersionClass != "L14a" || rep.Namespace != "longhorn-system" {
			t.Errorf("report header %+v", rep)
		}
		if rep.Summary.Volumes != 3 || rep.Summary.Healthy != 1 || rep.Summary.NeedAttention != 2 {
			t.Errorf("summary %+v", rep.Summary)
		}
		stuck := offFinding(rep, "pvc-stuck")
		if stuck == nil || stuck.Evidence.Logs == nil {
			t.Fatalf("pvc-stuck without log evidence: %+v", stuck)
		}
		ev := stuck.Evidence.Logs
		if ev.Count != 3 || !ev.FirstSeen.Equal(testenv.BugLinesAt.Add(-time.Minute)) || !ev.LastSeen.Equal(testenv.BugLinesAt.Add(time.Hour)) ||
			ev.Message != "BUG: found the second active engine pvc-stuck-e-bbbb2222 besides pvc-stuck-e-aaaa1111" || len(ev.Files) != 2 ||
			!strings.HasSuffix(ev.Files[0], "longhorn-manager-bbbbb/longhorn-manager.log") {
			t.Errorf("pvc-stuck log evidence %+v", ev)
		}
		only := offFinding(rep, "pvc-logonly")
		if only == nil || only.Type != detect.TypeSyncErrorInLogs || only.Severity != detect.SeverityWarning || only.Action != detect.ActionNone ||
			only.Evidence.Logs == nil || only.Evidence.Logs.Count != 1 || len(only.Evidence.Engines) != 1 || only.Evidence.CurrentNodeID != "node-b" {
			t.Errorf("pvc-logonly finding %+v", only)
		}
	})

	t.Run("volume argument", func(t *testing.T) {
		r := offRun(t, "scan", "--bundle", zipPath, "pvc-logonly", "-o", "json")
		rep := offReport(t, r)
		if r.Code != 1 || len(rep.Findings) != 1 || rep.Findings[0].Volume != "pvc-logonly" {
			t.Errorf("%s", r)
		}
		r = offRun(t, "scan", "--bundle", zipPath, "pvc-ok")
		if r.Code != 0 || strings.Contains(r.Stdout, "pvc-logonly") {
			t.Errorf("the log evidence of an unselected volume leaked:\n%s", r)
		}
		r = offRun(t, "scan", "--bundle", zipPath, "pvc-nope")
		if r.Code != 2 || !strings.Contains(r.Stderr, `error: volume "pvc-nope" not found in namespace "longhorn-system"`) {
			t.Errorf("%s", r)
		}
	})
}

func offRowHas(lines []string, parts ...string) bool {
	for _, l := range lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// A clean bundle exits 0; a bundle whose volume is in the #6642 state on a
// fixed release is reported with no automatic fix.
func TestScanBundleExitCodes(t *testing.T) {
	b := &testenv.Bundle{CreatedAt: testenv.BundleCreated}
	for _, o := range testenv.BundleScenario(testenv.BundleNamespace, "v1.5.2") {
		md := o["metadata"].(map[string]any)
		if strings.HasPrefix(md["name"].(string), "pvc-stuck") || o["kind"] == "InstanceManager" {
			continue // (the instance managers run pvc-stuck's engines)
		}
		b.Objects = append(b.Objects, o)
	}
	p := b.ZipPath(t, t.TempDir())
	r := offRun(t, "scan", "--bundle", p)
	if r.Code != 0 || !strings.Contains(r.Stderr, "No engine problems found: 2 volume(s) checked") {
		t.Errorf("%s", r)
	}
	if !strings.Contains(r.Stderr, "warning: the bundle has no longhorn-manager logs") {
		t.Errorf("no warning about the missing logs:\n%s", r.Stderr)
	}

	// On a fixed release a short burst of the BUG error on a volume that is
	// healthy now is the expected moment after a confirm: info, exit 0.
	ns := testenv.BundleNamespace
	b.Logs = map[string]string{ns + "/longhorn-manager-q1/longhorn-manager.log": testenv.BugLine(testenv.Style152, testenv.BugLinesAt, ns, "pvc-ok", "pvc-ok-e-1", "pvc-ok-e-0", "node-a") + "\n" +
		testenv.BugLine(testenv.Style152, testenv.BugLinesAt.Add(20*time.Second), ns, "pvc-ok", "pvc-ok-e-1", "pvc-ok-e-0", "node-a") + "\n"}
	p = b.ZipPath(t, t.TempDir())
	r = offRun(t, "scan", "--bundle", p, "-o", "json")
	rep := offReport(t, r)
	f := offFinding(rep, "pvc-ok")
	if r.Code != 0 || f == nil || f.Type != detect.TypeSyncErrorInLogs || f.Severity != detect.SeverityInfo || f.Evidence.Logs.Count != 2 {
		t.Errorf("%s", r)
	}
}

// Every -f input shape gives the same report.
func TestScanFiles(t *testing.T) {
	objs := testenv.BundleScenario(testenv.BundleNamespace, "v1.4.3")
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	items := make([]any, len(objs))
	var multi strings.Builder
	var singles []string
	for i, o := range objs {
		items[i] = o
		y := testenv.KubectlYAML(t, o)
		multi.WriteString("---\n" + string(y))
		singles = append(singles, "-f", write(strings.ToLower(o["kind"].(string))+"-"+o["metadata"].(map[string]any)["name"].(string)+".yaml", y))
	}
	list := map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items}
	listJSON, err := json.MarshalIndent(list, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"YAML List", []string{"-f", write("list.yaml", testenv.KubectlYAML(t, list))}, ""},
		{"JSON List", []string{"-f", write("list.json", listJSON)}, ""},
		{"multi-document YAML", []string{"-f", write("multi.yaml", []byte(multi.String()))}, ""},
		{"single objects", singles, ""},
		{"comma-separated names", []string{"-f", strings.Join(offEveryOther(singles), ",")}, ""},
		{"stdin", []string{"-f", "-"}, string(testenv.KubectlYAML(t, list))},
		{"long flag", []string{"--filename", filepath.Join(dir, "list.json")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"scan", "-o", "json"}, tc.args...)
			r := clitest.New(t, "").Input(strings.NewReader(tc.stdin)).Timeout(time.Minute).Run(context.Background(), args...)
			if r.Code != 1 || r.Stderr != "" {
				t.Fatalf("%s", r)
			}
			rep := offReport(t, r)
			if rep.Source != "files" || rep.LonghornVersion != "v1.4.3" || rep.Summary.Volumes != 3 || len(rep.Findings) != 1 {
				t.Fatalf("report %+v", rep)
			}
			f := rep.Findings[0]
			if f.Volume != "pvc-stuck" || f.Type != detect.TypeMultipleActiveEngines || f.Keep != "pvc-stuck-e-bbbb2222" ||
				f.Action != detect.ActionDeactivate || f.Evidence.Logs != nil {
				t.Errorf("finding %+v", f)
			}
		})
	}
	t.Run("wide has no log column for files", func(t *testing.T) {
		r := offRun(t, "scan", "-o", "wide", "-f", filepath.Join(dir, "list.yaml"))
		if r.Code != 1 || strings.Contains(r.Stdout, "LOGS") || !strings.Contains(r.Stdout, "pvc-stuck-e-aaaa1111@node-a(active,running)") {
			t.Errorf("%s", r)
		}
	})
}

func offEveryOther(args []string) []string {
	var out []string
	for i := 1; i < len(args); i += 2 {
		out = append(out, args[i])
	}
	return out
}

// Inputs that cannot be used: one clear line each; exit 2 when nothing
// usable is left, a report otherwise.
func TestScanOfflineMalformed(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.zip")
	if err := os.WriteFile(garbage, []byte("not a zip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	list := map[string]any{"kind": "List", "items": offAny(testenv.BundleScenario(testenv.BundleNamespace, "v1.4.3"))}
	if err := os.WriteFile(good, testenv.KubectlYAML(t, list), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("kind: Engine\nmetadata: {name: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := offScenarioBundle()
	files, err := b.Files()
	if err != nil {
		t.Fatal(err)
	}
	data, err := testenv.Zip(files)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.zip")
	if err := os.WriteFile(truncated, testenv.TruncateZip(data, len(data)*3/4), 0o644); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		args     []string
		code     int
		stderr   []string
		noStdout bool
	}{
		{"garbage bundle", []string{"--bundle", garbage}, 2, []string{"error: " + garbage + ": neither a readable zip nor a folder"}, true},
		{"missing bundle", []string{"--bundle", filepath.Join(dir, "nope.zip")}, 2, []string{"error: ", "nope.zip: no such file or directory"}, true},
		{"bundle and files", []string{"--bundle", garbage, "-f", good}, 2, []string{"error: --bundle and -f/--filename cannot be used together"}, true},
		{"only a missing file", []string{"-f", filepath.Join(dir, "nope.yaml")}, 2, []string{"warning: " + filepath.Join(dir, "nope.yaml") + ": no such file or directory", "error: none of the given files could be read"}, true},
		{"only a broken file", []string{"-f", broken}, 2, []string{"warning: " + broken + ": document 1: YAML does not parse", "error: no Longhorn objects found"}, true},
		{"broken and good files", []string{"-f", broken, "-f", good}, 2, []string{"warning: " + broken + ": document 1: YAML does not parse", "orphan engine checks skipped", "error: the check is incomplete", broken + " was not read completely"}, false},
		{"truncated bundle", []string{"--bundle", truncated}, 1, []string{"warning: " + truncated + ": damaged zip"}, false},
		{"empty file name", []string{"-f", ""}, 2, []string{"error: -f/--filename needs a file name"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := offRun(t, append([]string{"scan"}, tt.args...)...)
			if r.Code != tt.code {
				t.Errorf("exit %d, want %d\n%s", r.Code, tt.code, r)
			}
			for _, s := range tt.stderr {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.Stderr)
				}
			}
			if n := strings.Count(r.Stderr, "error: "); (tt.code == 2 && n != 1) || (tt.code != 2 && n != 0) {
				t.Errorf("%d error lines:\n%s", n, r.Stderr)
			}
			if tt.noStdout && r.Stdout != "" {
				t.Errorf("stdout:\n%s", r.Stdout)
			}
		})
	}
}

func offAny(objs []map[string]any) []any {
	out := make([]any, len(objs))
	for i := range objs {
		out[i] = objs[i]
	}
	return out
}

// Namespace rule: -n if given, else longhorn-system, else the only one.
func TestScanBundleNamespace(t *testing.T) {
	b := &testenv.Bundle{CreatedAt: testenv.BundleCreated}
	b.Objects = append(testenv.BundleScenario("lh-a", "v1.4.3"), testenv.BundleScenario("lh-b", "v1.5.1")...)
	p := b.ZipPath(t, t.TempDir())
	r := offRun(t, "scan", "--bundle", p)
	if r.Code != 2 || !strings.Contains(r.Stderr, "error: the bundle has Longhorn objects in several namespaces (lh-a, lh-b): choose one with -n") {
		t.Errorf("%s", r)
	}
	r = offRun(t, "scan", "--bundle", p, "-n", "lh-b", "-o", "json")
	rep := offReport(t, r)
	if r.Code != 1 || rep.Namespace != "lh-b" || rep.LonghornVersion != "v1.5.1" || !offFinding(rep, "pvc-stuck").Action.Writes() {
		t.Errorf("%s", r)
	}
}

// A Longhorn 1.3 bundle (its own layout) is classified for 1.3.
func TestScanBundle13(t *testing.T) {
	p := filepath.Join("..", "readstate", "testdata", "longhorn-support-bundle_6a1c9e2f_2022-08-01T09-30-00Z")
	r := offRun(t, "scan", "--bundle", p, "-o", "json")
	if r.Code != 1 || !strings.Contains(r.Stderr, "warning: longhorn-support-bundle_6a1c9e2f_2022-08-01T09-30-00Z: Longhorn 1.3 bundle layout") {
		t.Fatalf("%s", r)
	}
	rep := offReport(t, r)
	f := offFinding(rep, "pvc-13")
	if rep.VersionClass != "L13" || f == nil || f.Type != detect.TypeMultipleActiveEngines || f.Keep != "pvc-13-e-8b2e4f60" ||
		f.Action != detect.ActionDeactivate || f.Evidence.Logs == nil || f.Evidence.Logs.Count != 2 {
		t.Errorf("report %+v\nfinding %+v", rep, f)
	}
}
