package fix_test

import (
	"context"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Without a controller, `fix --wait=false` shows the write itself: the
// stale engine deactivated (1.3/1.4) or deleted (1.5.0/1.5.1), the survivor
// untouched, a backup and an action log.
func TestFixWritesOnlyTheStaleEngine(t *testing.T) {
	for _, version := range []string{testenv.L13, testenv.L14a, testenv.L15a} {
		t.Run(version, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.TwoActiveEngines(version, "vol"))
			stale, keep := testenv.EngineName(version, "vol", 0), testenv.EngineName(version, "vol", 1)
			keepBefore := getEngine(t, ctx, keep)
			dir := filepath.Join(t.TempDir(), "backup")

			res := runFix(t, ctx, "vol", "--yes", "--wait=false", "--backup-dir", dir)
			if res.Code != cmdutil.ExitOK {
				t.Fatalf("exit %d", res.Code)
			}
			keepAfter := getEngine(t, ctx, keep)
			if keepAfter.GetResourceVersion() != keepBefore.GetResourceVersion() {
				t.Errorf("the survivor %s was written", keep)
			}
			e := getEngine(t, ctx, stale)
			if version == testenv.L15a {
				testenv.Contains(t, "stdout", res.Stdout, `engine.longhorn.io "`+stale+`" deleted`+"\n")
				if e.GetDeletionTimestamp() == nil {
					t.Errorf("stale engine %s not deleted", stale)
				}
			} else {
				testenv.Contains(t, "stdout", res.Stdout, `engine.longhorn.io "`+stale+`" deactivated`+"\n")
				if active, _, _ := unstructured.NestedBool(e.Object, "spec", "active"); active || e.GetDeletionTimestamp() != nil {
					t.Errorf("stale engine %s: active=%t deleting=%t, want deactivated", stale, active, e.GetDeletionTimestamp() != nil)
				}
			}
			testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol" changed:`)
			testenv.Contains(t, "stderr", res.Stderr, "Backups and the action log go to "+dir)
			backup := readFile(t, filepath.Join(dir, "vol.yaml"))
			testenv.Contains(t, "backup", backup, "---\n", "name: "+stale, "name: "+keep, "kind: Volume")
			log := readFile(t, filepath.Join(dir, fix.ActionLogName))
			testenv.Contains(t, "actions.log", log, "plan volume=vol", "recheck volume=vol ok", "backup volume=vol", "engine="+stale+" uid=", "attempt", "engine="+stale+" ok")
			if strings.Contains(log, "engine="+keep+" uid=") {
				t.Errorf("action log shows a write to the survivor:\n%s", log)
			}
		})
	}
}

// States where no action is safe change nothing, on every generation.
func TestFixRefusedStatesChangeNothing(t *testing.T) {
	type tc struct {
		version string
		build   func(string, string) *testenv.Objects
		code    int
		says    string
	}
	var cases []tc
	for _, v := range []string{testenv.L13, testenv.L14a, testenv.L15a, testenv.L14f, testenv.L15f, testenv.L16} {
		cases = append(cases,
			tc{v, testenv.Issue4827, cmdutil.ExitNeedsAction, "refused"},
			tc{v, testenv.MidMigration, cmdutil.ExitOK, "in-flight"},
			tc{v, testenv.Healthy, cmdutil.ExitOK, "healthy"},
		)
	}
	// The newest release a repair was run on is 1.12.
	cases = append(cases, tc{"v1.13.0", testenv.TwoActiveEngines, cmdutil.ExitNeedsAction, "has not been proven on Longhorn v1.13.0"})
	cases = append(cases, tc{testenv.L14f, testenv.PendingCleanup, cmdutil.ExitOK, "in-flight"})
	for _, c := range cases {
		name := c.version + "/" + strings.TrimPrefix(funcName(c.build), "testenv.")
		t.Run(name, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, c.build(c.version, "vol"))
			before := versions(t, ctx)
			dir := filepath.Join(t.TempDir(), "backup")
			res := runFix(t, ctx, "vol", "--yes", "--backup-dir", dir, "--timeout", "2s")
			if res.Code != c.code {
				t.Errorf("exit %d, want %d", res.Code, c.code)
			}
			testenv.Contains(t, "stdout", res.Stdout, c.says)
			testenv.AssertUnchanged(t, before, versions(t, ctx))
			noFile(t, dir)
		})
	}
	t.Run("unknown version", func(t *testing.T) {
		ctx := reset(t)
		o := testenv.TwoActiveEngines(testenv.L14a, "vol")
		o.Version = ""
		create(t, ctx, o)
		before := versions(t, ctx)
		res := runFix(t, ctx, "vol", "--yes", "--strategy=deactivate")
		if res.Code != cmdutil.ExitNeedsAction {
			t.Errorf("exit %d", res.Code)
		}
		testenv.Contains(t, "stderr", res.Stderr, "Longhorn version unknown")
		testenv.AssertUnchanged(t, before, versions(t, ctx))
	})
}

func funcName(f func(string, string) *testenv.Objects) string {
	for _, s := range testenv.Scenarios {
		if funcEq(s.Build, f) {
			return s.Name
		}
	}
	return "scenario"
}

func funcEq(a, b func(string, string) *testenv.Objects) bool {
	oa, ob := a("v1.4.3", "x"), b("v1.4.3", "x")
	return len(oa.Engines) == len(ob.Engines) && len(oa.Deleting) == len(ob.Deleting) &&
		reflect.DeepEqual(oa.Volumes[0].Spec, ob.Volumes[0].Spec) && reflect.DeepEqual(oa.Volumes[0].Status, ob.Volumes[0].Status)
}

// --strategy=delete is refused on 1.4 with the reason; deactivate is
// accepted on 1.5.0/1.5.1.
func TestFixStrategyOverride(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
	before := versions(t, ctx)
	res := runFix(t, ctx, "vol", "--yes", "--strategy=delete", "--backup-dir", t.TempDir())
	if res.Code != cmdutil.ExitNeedsAction {
		t.Errorf("exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, "--strategy=delete refused on Longhorn v1.4.3")
	testenv.AssertUnchanged(t, before, versions(t, ctx))

	ctx = reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L15a, "vol"))
	stale := testenv.EngineName(testenv.L15a, "vol", 0)
	res = runFix(t, ctx, "vol", "--yes", "--strategy=deactivate", "--wait=false", "--backup-dir", t.TempDir())
	if res.Code != cmdutil.ExitOK {
		t.Errorf("exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, `engine.longhorn.io "`+stale+`" deactivated`)
	if e := getEngine(t, ctx, stale); e.GetDeletionTimestamp() != nil {
		t.Error("deleted despite --strategy=deactivate")
	}
}

func TestFixDryRunsChangeNothing(t *testing.T) {
	for _, version := range []string{testenv.L14a, testenv.L15a} {
		stale := testenv.EngineName(version, "vol", 0)
		verb := "deactivated"
		if version == testenv.L15a {
			verb = "deleted"
		}
		for _, mode := range []string{"client", "server"} {
			t.Run(version+"/"+mode, func(t *testing.T) {
				ctx := reset(t)
				create(t, ctx, testenv.TwoActiveEngines(version, "vol"))
				before := versions(t, ctx)
				dir := filepath.Join(t.TempDir(), "backup")
				res := runFix(t, ctx, "vol", "--dry-run="+mode, "--backup-dir", dir)
				if res.Code != cmdutil.ExitOK {
					t.Errorf("exit %d", res.Code)
				}
				suffix := " (dry run)"
				if mode == "server" {
					suffix = " (server dry run)"
				}
				testenv.Contains(t, "stdout", res.Stdout, "Plan for Longhorn "+version, `engine.longhorn.io "`+stale+`" `+verb+suffix+"\n")
				testenv.AssertUnchanged(t, before, versions(t, ctx))
				noFile(t, dir)
			})
		}
	}
	// A server dry run goes through the server's checks: a stale write is
	// refused there too.
	t.Run("server refuses a stale write", func(t *testing.T) {
		ctx := reset(t)
		create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
		stale := testenv.EngineName(testenv.L14a, "vol", 0)
		res := cli(t, cluster.KubeconfigPath(), fix.Hooks{BeforeWrite: func(string) { touch(t, ctx, longhorn.Engines, stale) }}).Run(ctx, fixArgs("vol", "--dry-run=server")...)
		if res.Code != cmdutil.ExitNeedsAction {
			t.Errorf("exit %d", res.Code)
		}
		testenv.Contains(t, "stdout", res.Stdout, "changed after the re-check")
	})
}

func TestFixNeedsATerminalOrYes(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
	before := versions(t, ctx)
	dir := filepath.Join(t.TempDir(), "backup")
	// A piped "y" (echo y | ...) answers nothing, as for migrate: only a
	// terminal is asked.
	res := cli(t, cluster.KubeconfigPath(), fix.Hooks{}).Input(strings.NewReader("y\n")).Run(ctx, fixArgs("vol", "--backup-dir", dir)...)
	if res.Code != cmdutil.ExitNeedsAction || strings.Contains(res.Stderr, "[y/N]") {
		t.Errorf("piped y: want exit %d and no question: %s", cmdutil.ExitNeedsAction, res)
	}
	testenv.Contains(t, "stdout", res.Stdout, "Plan for Longhorn", "deactivate")
	testenv.Contains(t, "stderr", res.Stderr, "error: stdin is not a terminal and --yes was not given: nothing was changed")
	testenv.AssertUnchanged(t, before, versions(t, ctx))
	noFile(t, dir)

	// On a terminal, anything but y/yes declines; y applies.
	terminal := fix.Hooks{Terminal: func(io.Reader) bool { return true }}
	for _, answer := range []string{"", "n\n", "no\n", "yess\n"} {
		res := cli(t, cluster.KubeconfigPath(), terminal).Input(strings.NewReader(answer)).Run(ctx, fixArgs("vol", "--backup-dir", dir)...)
		if res.Code != cmdutil.ExitNeedsAction || !strings.Contains(res.Stderr, "[y/N]") || !strings.Contains(res.Stderr, "aborted: nothing was changed") {
			t.Errorf("answer %q: %s", answer, res)
		}
	}
	testenv.AssertUnchanged(t, before, versions(t, ctx))
	res = cli(t, cluster.KubeconfigPath(), terminal).Input(strings.NewReader("y\n")).Run(ctx, "fix", "vol", "--backup-dir", dir, "--wait=false")
	if res.Code != cmdutil.ExitOK || !strings.Contains(res.Stdout, "deactivated") {
		t.Errorf("answer y: %s", res)
	}
}

// A change between the plan and the act skips the volume with the reason,
// and nothing is written.
func TestFixSkipsWhatChangedAfterThePlan(t *testing.T) {
	stale, keep := testenv.EngineName(testenv.L14a, "vol", 0), testenv.EngineName(testenv.L14a, "vol", 1)
	tests := []struct {
		name   string
		change func(t *testing.T, ctx context.Context)
		says   string
	}{
		{"volume resourceVersion bumps", func(t *testing.T, ctx context.Context) { touch(t, ctx, longhorn.Volumes, "vol") }, "the volume changed"},
		{"stale engine resourceVersion bumps", func(t *testing.T, ctx context.Context) { touch(t, ctx, longhorn.Engines, stale) }, "engine " + stale + " changed"},
		{"stale engine replaced", func(t *testing.T, ctx context.Context) {
			u := getEngine(t, ctx, stale)
			engines := cluster.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(cluster.Namespace())
			if _, err := engines.Patch(ctx, stale, "application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := engines.Delete(ctx, stale, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			restored := fix.Restorable(u)
			if _, err := cluster.Create(ctx, restored); err != nil {
				t.Fatal(err)
			}
		}, "engine " + stale + " was replaced"},
		{"survivor deactivated", func(t *testing.T, ctx context.Context) {
			engines := cluster.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(cluster.Namespace())
			if _, err := engines.Patch(ctx, keep, "application/merge-patch+json", []byte(`{"spec":{"active":false}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}, "engine " + keep + " changed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
			dir := filepath.Join(t.TempDir(), "backup")
			res := cli(t, cluster.KubeconfigPath(), fix.Hooks{AfterPlan: func() { tt.change(t, ctx) }}).Run(ctx, fixArgs("vol", "--yes", "--backup-dir", dir)...)
			if res.Code != cmdutil.ExitNeedsAction {
				t.Errorf("exit %d", res.Code)
			}
			testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol" skipped: skipped, nothing written: `+tt.says)
			if active, _, _ := unstructured.NestedBool(getEngine(t, ctx, stale).Object, "spec", "active"); !active {
				t.Error("the stale engine was written")
			}
			if strings.Contains(res.Stdout, "deactivated") {
				t.Error("a change line was printed")
			}
			testenv.Contains(t, "actions.log", readFile(t, filepath.Join(dir, fix.ActionLogName)), "skip reason=")
			noFile(t, filepath.Join(dir, "vol.yaml"))
		})
	}
}

// A write the server refuses (the engine changed between the re-check and
// the write) is reported in one line and leaves nothing half done.
func TestFixWriteRefusedByTheServer(t *testing.T) {
	for _, version := range []string{testenv.L14a, testenv.L15a} {
		t.Run(version, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.TwoActiveEngines(version, "vol"))
			stale := testenv.EngineName(version, "vol", 0)
			touchStale := func(name string) {
				if name == stale {
					touch(t, ctx, longhorn.Engines, name)
				}
			}
			dir := filepath.Join(t.TempDir(), "backup")
			res := cli(t, cluster.KubeconfigPath(), fix.Hooks{BeforeWrite: touchStale}).Run(ctx, fixArgs("vol", "--yes", "--backup-dir", dir)...)
			if res.Code != cmdutil.ExitNeedsAction {
				t.Errorf("exit %d", res.Code)
			}
			testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol" failed: the server refused to`, "changed after the re-check",
				"; written: ", "not written: engine "+stale+" (still active)", "safe to leave", "do not delete or deactivate "+stale+" by hand")
			e := getEngine(t, ctx, stale)
			if active, _, _ := unstructured.NestedBool(e.Object, "spec", "active"); !active || e.GetDeletionTimestamp() != nil {
				t.Error("the stale engine was changed")
			}
			log := readFile(t, filepath.Join(dir, fix.ActionLogName))
			testenv.Contains(t, "actions.log", log, "engine="+stale+" uid=", "attempt", "engine="+stale+" error=", "check volume=vol replicas ok")

			// The next run finds the flags already right and completes.
			again := runFix(t, ctx, "vol", "--yes", "--wait=false", "--backup-dir", t.TempDir())
			testenv.Contains(t, "stdout", again.Stdout, `engine.longhorn.io "`+stale+`" `)
			if strings.Contains(again.Stdout, "replica.longhorn.io") {
				t.Errorf("second run wrote replicas again: %s", again.Stdout)
			}
		})
	}
	// A replica write the server refuses stops before any engine write.
	for _, version := range []string{testenv.L14a, testenv.L15a} {
		t.Run(version+"/replica", func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.TwoActiveEngines(version, "vol"))
			before := versions(t, ctx)
			first := ""
			touchFirst := func(name string) {
				if first == "" {
					first = name
					touch(t, ctx, longhorn.Replicas, name)
				}
			}
			res := cli(t, cluster.KubeconfigPath(), fix.Hooks{BeforeWrite: touchFirst}).Run(ctx, fixArgs("vol", "--yes", "--backup-dir", t.TempDir())...)
			if res.Code != cmdutil.ExitNeedsAction {
				t.Errorf("exit %d", res.Code)
			}
			testenv.Contains(t, "stdout", res.Stdout, `the server refused to patch replica `+first, "not written: ", "(still active)")
			after := versions(t, ctx)
			for k, v := range before {
				if k != "replicas/"+first && after[k] != v {
					t.Errorf("%s written", k)
				}
			}
		})
	}
}

func TestFixBadInput(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol").Add(&testenv.Objects{Volumes: testenv.Healthy(testenv.L14a, "ok").Volumes,
		Engines: testenv.Healthy(testenv.L14a, "ok").Engines, Replicas: testenv.Healthy(testenv.L14a, "ok").Replicas}))
	before := versions(t, ctx)
	tests := []struct {
		args   []string
		code   int
		stderr string
		stdout string
	}{
		{[]string{}, cmdutil.ExitNoCheck, "error: no volume selected: name the volumes to repair (kubectl longhorn-engines fix VOLUME...) or pass --all", ""},
		{[]string{"vol", "--all"}, cmdutil.ExitNoCheck, "error: name volumes or pass --all, not both", ""},
		{[]string{"nope", "--yes"}, cmdutil.ExitNoCheck, `error: volume "nope" not found in namespace "longhorn-system"`, ""},
		{[]string{"ok", "--yes"}, cmdutil.ExitOK, "Nothing to change.", "healthy: at most one active engine"},
		{[]string{"vol", "--strategy=force"}, cmdutil.ExitNoCheck, "error: --strategy must be one of auto, deactivate, delete", ""},
		{[]string{"vol", "--dry-run=maybe"}, cmdutil.ExitNoCheck, `error: invalid --dry-run value "maybe": must be "none", "server", or "client"`, ""},
		// kubectl's deprecated boolean: a client dry run, with a warning, as in migrate
		{[]string{"vol", "--dry-run=true"}, cmdutil.ExitOK, "warning: --dry-run is deprecated and can be replaced with --dry-run=client.", "(dry run)"},
		{[]string{"vol", "--parallel=0"}, cmdutil.ExitNoCheck, "error: --parallel must be at least 1", ""},
		{[]string{"vol", "--backup-to=s3"}, cmdutil.ExitNoCheck, `error: --backup-to must be dir or configmap (got "s3")`, ""},
		{[]string{"vol", "-n", "elsewhere", "--yes"}, cmdutil.ExitNoCheck, `error: no Longhorn found in namespace "elsewhere"`, ""},
	}
	for _, tt := range tests {
		res := runFix(t, ctx, tt.args...)
		if res.Code != tt.code || !strings.Contains(res.Stderr, tt.stderr) || !strings.Contains(res.Stdout, tt.stdout) {
			t.Errorf("fix %v: want exit %d, stderr %q, stdout %q; got %s", tt.args, tt.code, tt.stderr, tt.stdout, res)
		}
		if n := strings.Count(res.Stderr, "error: "); n > 1 {
			t.Errorf("fix %v: %d error lines", tt.args, n)
		}
	}
	testenv.AssertUnchanged(t, before, versions(t, ctx))
}

// TestFixForbidden (a read-only user, a user with no rights) runs on
// Kubernetes' own RBAC in internal/e2e.

func TestFixMissingCRDs(t *testing.T) {
	ctx := reset(t)
	if err := cluster.UninstallCRDs(ctx, "Engine"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.InstallCRDs(ctx, "Engine"); err != nil {
			t.Error(err)
		}
	})
	o := testenv.TwoActiveEngines(testenv.L14a, "vol")
	o.Engines = nil
	create(t, ctx, o)
	res := runFix(t, ctx, "vol", "--yes")
	if res.Code != cmdutil.ExitNoCheck {
		t.Errorf("exit %d", res.Code)
	}
	testenv.Contains(t, "stderr", res.Stderr, "error: the server has no resource engines.longhorn.io: Longhorn is not installed")
}
