package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// An operator's first hour (issue #32): what the plugin says through
// kubectl is true, its exit codes are the documented ones, and nothing
// incomplete is called clean.

// dump writes `kubectl get <args> -o yaml` of the test cluster to a file,
// as an operator would, and returns its path.
func dump(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	r := kubectl(ctx, t, append([]string{"get", "-n", cluster.Namespace(), "-o", "yaml"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("kubectl get %v:\n%v", args, r)
	}
	path := filepath.Join(t.TempDir(), "dump.yaml")
	if err := os.WriteFile(path, []byte(r.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readmeDump is the resource list of the dump command the README gives
// for -f.
func readmeDump(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(moduleRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return dumpResources(t, "README.md", string(b))
}

// dumpResources is the resource list of the first
// `kubectl -n longhorn-system get RESOURCES -o yaml > dump.yaml` line of
// text (the README's, or an example in a help text).
func dumpResources(t *testing.T, where, text string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*kubectl -n longhorn-system get (\S+) -o yaml > dump\.yaml`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("%s has no `kubectl -n longhorn-system get ... -o yaml > dump.yaml` line", where)
	}
	return m[1]
}

// Item 1: -f input without the engines (or replicas) is an incomplete check,
// exit 2, never "No engine problems found"; item 9: the dump commands the
// README and scan --help give carry everything the verdict needs, the
// version included.
func TestFileInputMustHoldWhatTheVerdictNeeds(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, testenv.Healthy(stuckVersion, "pvc-fine"), stuck())

	volumesOnly := dump(ctx, t, "volumes.longhorn.io,settings.longhorn.io")
	noReplicas := dump(ctx, t, "volumes.longhorn.io,settings.longhorn.io,engines.longhorn.io")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "-f", volumesOnly}, "no Engine objects"},
		{[]string{"describe", stuckVolume, "-f", volumesOnly}, "no Engine objects"},
		{[]string{"preflight", "-f", volumesOnly}, "no Engine objects"},
		{[]string{"scan", "-f", noReplicas}, "no Replica objects"},
	} {
		r := kubectl(ctx, t, append([]string{"longhorn-engines"}, tc.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || strings.Contains(r.Stderr, "No engine problems found") {
			t.Errorf("%v: want exit 2 naming %q, never a clean result:\n%v", tc.args, tc.want, r)
		}
	}

	// The README's dump line, and the one the binary's own `scan --help`
	// gives (at 69d645a the README had none and pointed there).
	help := kubectl(ctx, t, "longhorn-engines", "scan", "--help")
	for _, d := range []struct{ where, resources string }{
		{"the README's dump", readmeDump(t)},
		{"scan --help's dump", dumpResources(t, "scan --help", help.Stdout)},
	} {
		r := kubectl(ctx, t, "longhorn-engines", "scan", "-f", dump(ctx, t, d.resources))
		if r.Code != 1 || strings.Contains(r.Stderr, "version unknown") || !strings.Contains(r.Stdout, stuckVolume) {
			t.Errorf("scan -f of %s (%s): want exit 1 with the stuck volume and a known version:\n%v", d.where, d.resources, r)
		}
	}
}

// Item 2: every dry run and the plan before the prompt list the replica
// writes that come before the engine's, in the plan's order, and what each
// writes. The writes expected are the ones scan reports for the finding.
func TestDryRunsListEveryWriteInOrder(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	r := kubectl(ctx, t, "longhorn-engines", "scan", stuckVolume, "-o", "json")
	var rep struct {
		Findings []struct {
			ReplicaChanges []struct {
				Replica    string `json:"replica"`
				FromActive bool   `json:"fromActive"`
				ToActive   bool   `json:"toActive"`
			} `json:"replicaChanges"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Findings) != 1 {
		t.Fatalf("scan -o json: %v\n%v", err, r)
	}
	changes := rep.Findings[0].ReplicaChanges
	if len(changes) == 0 {
		t.Fatalf("the scenario needs replica writes for this test:\n%v", r)
	}
	// inOrder checks that each of want appears in out after the previous one.
	inOrder := func(name, out string, want []string) {
		t.Helper()
		at := 0
		for _, w := range want {
			i := strings.Index(out[at:], w)
			if i < 0 {
				t.Errorf("%s: %q missing or out of order (want %q):\n%s", name, w, want, out)
				return
			}
			at += i + len(w)
		}
	}
	var lines, fields []string
	for _, c := range changes {
		lines = append(lines, `replica.longhorn.io "`+c.Replica+`"`)
		fields = append(fields, fmt.Sprintf(`replica.longhorn.io %q: spec.active: %t -> %t`, c.Replica, c.FromActive, c.ToActive))
	}
	lines = append(lines, `engine.longhorn.io "`+stale+`" deactivated`)
	fields = append(fields, `engine.longhorn.io "`+stale+`": spec.active: true -> false`)

	client := kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--dry-run=client")
	inOrder("--dry-run=client", client.Stdout, fields)
	plan, _, _ := strings.Cut(client.Stdout, "Writes for")
	_, writes, _ := strings.Cut(client.Stdout, "Writes for")
	if plan == client.Stdout {
		t.Errorf("the plan does not list its writes:\n%v", client)
	}
	_, afterPlan, _ := strings.Cut(writes, "\n"+`replica.longhorn.io "`)
	inOrder("--dry-run=client change lines", `replica.longhorn.io "`+afterPlan, lines)

	server := kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--dry-run=server")
	if server.Code != 0 || strings.Contains(server.Stdout, "would deactivate "+changes[0].Replica) {
		t.Errorf("--dry-run=server: want exit 0 and no replica called deactivated when it is activated:\n%v", server)
	}
	inOrder("--dry-run=server", server.Stdout, fields)

	// The plan before the prompt (no terminal: the plan, then the refusal).
	asked := kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume)
	inOrder("plan before the prompt", asked.Stdout, fields)
	if !engineActive(ctx, t, stale) {
		t.Errorf("a dry run or an unconfirmed plan changed the stale engine")
	}
}

// Item 3: usage errors exit 2; preflight --to an older release prints what
// it read before the error.
func TestExitCodesAsDocumented(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"describe"}, 2, "requires at least 1 arg"},
		{[]string{"help", "bogus"}, 2, "bogus"},
		{[]string{"scan", "--bogus"}, 2, "--help"},
		{[]string{"scan", "-l", "bad!!"}, 2, "selector"},
		{[]string{"scan", "--no-headers", "-o", "json"}, 2, "--no-headers"},
	} {
		r := kubectl(ctx, t, append([]string{"longhorn-engines"}, tc.args...)...)
		if r.Code != tc.code || !strings.HasPrefix(r.Stderr, "error: ") || !strings.Contains(r.Stderr, tc.want) || strings.Count(r.Stderr, "\n") != 1 {
			t.Errorf("%v: want exit %d and one error line with %q:\n%v", tc.args, tc.code, tc.want, r)
		}
	}
	r := kubectl(ctx, t, "longhorn-engines", "preflight", "--to", "v1.4.0")
	if r.Code != 2 || !strings.Contains(r.Stdout, stuckVolume) || !strings.Contains(r.Stderr, "v1.4.0") {
		t.Errorf("preflight --to an older release: want the report on stdout, then exit 2:\n%v", r)
	}
	for _, to := range []string{stuckVersion, "v9.9.9"} {
		r := kubectl(ctx, t, "longhorn-engines", "preflight", "--to", to)
		if !strings.Contains(r.Stderr, "warning: --to "+to) {
			t.Errorf("preflight --to %s: want a warning about the target:\n%v", to, r)
		}
	}
}

// Item 3: Ctrl-C on the guard exits 130 with the interrupted line, after
// its summary.
func TestGuardCtrlCExits130(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, testenv.Healthy(stuckVersion, "pvc-fine"))
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, kubectlPath, "longhorn-engines", "fix", "--watch", "--dry-run=client", "--for", "10m")
	cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "KUBECONFIG=" + cluster.KubeconfigPath(), "HOME=" + filepath.Join(work, "home"), "NO_COLOR=1"}
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		errOut.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "watching ") {
			break
		}
	}
	// kubectl execs the plugin in its own place: the signal reaches it.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		errOut.WriteString(sc.Text() + "\n")
	}
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 || !strings.Contains(errOut.String(), "error: interrupted by SIGINT") || !strings.Contains(errOut.String(), "Summary:") {
		t.Errorf("Ctrl-C on fix --watch: exit %d, want 130, the summary and the interrupted line:\n%s", code, errOut.String())
	}
}

// Item 4: /dev/null on stdin (cron, containers, ssh </dev/null) is not a
// terminal: no prompt, the "not a terminal" error, nothing changed.
func TestDevNullIsNotATerminal(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	r := kubectl(ctx, t, "longhorn-engines", "fix", "--all") // exec gives the child /dev/null
	if r.Code != 1 || strings.Contains(r.Stderr, "[y/N]") || !strings.Contains(r.Stderr, "stdin is not a terminal") {
		t.Errorf("fix --all </dev/null: want exit 1, no prompt, 'stdin is not a terminal':\n%v", r)
	}
	if !engineActive(ctx, t, stale) {
		t.Errorf("fix without --yes on /dev/null changed the stale engine")
	}
}

// Item 6: unknown is never no. A precondition not checked is not "ok" in
// JSON; preflight with an unknown release does not call the cluster
// unexposed.
func TestUnknownIsNeverNo(t *testing.T) {
	ctx := begin(t)
	moving := testenv.MidMigration(stuckVersion, "pvc-moving")
	create(ctx, t, stuck(), moving)
	// Offline input has no pods: the workload check is not made.
	full := dump(ctx, t, readmeDump(t))
	r := kubectl(ctx, t, "longhorn-engines", "scan", stuckVolume, "-f", full, "-o", "json")
	var rep struct {
		Findings []struct {
			Preconditions []struct {
				Name       string `json:"name"`
				OK         bool   `json:"ok"`
				NotChecked bool   `json:"notChecked"`
			} `json:"preconditions"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Findings) == 0 {
		t.Fatalf("scan -o json: %v\n%v", err, r)
	}
	notChecked := 0
	for _, c := range rep.Findings[0].Preconditions {
		if c.NotChecked {
			notChecked++
			if c.OK {
				t.Errorf("precondition %q not checked but \"ok\": true", c.Name)
			}
		}
	}
	if notChecked == 0 {
		t.Errorf("want a not-checked precondition from files without pods:\n%s", r.Stdout)
	}

	// The version setting gone: the release is unknown.
	if err := cluster.Dynamic().Resource(longhorn.Settings.GVR()).Namespace(cluster.Namespace()).Delete(ctx, longhorn.VersionSetting, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r = kubectl(ctx, t, "longhorn-engines", "preflight")
	if strings.Contains(r.Stderr, "not exposed") || !strings.Contains(r.Stderr, "unknown") {
		t.Errorf("preflight with an unknown release: never 'not exposed':\n%v", r)
	}
	r = kubectl(ctx, t, "longhorn-engines", "preflight", "-o", "json")
	var pre struct {
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &pre); err != nil {
		t.Fatalf("preflight -o json: %v\n%v", err, r)
	}
	if v, ok := pre.Summary["exposed"]; !ok || v != nil {
		t.Errorf("preflight -o json with an unknown release: exposed = %v, want null", v)
	}
}

// Item 8: names a person can paste into kubectl: full engine names in a
// pipe and in describe. Item 10: a volume named is shown, healthy or not.
func TestNamesCanBePastedAndNamedVolumesShown(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck(), testenv.Healthy(stuckVersion, "pvc-fine"))
	r := kubectl(ctx, t, "longhorn-engines", "scan")
	if !strings.Contains(r.Stdout, survivor+"@node-b") || !strings.Contains(r.Stdout, stale+"@node-a") {
		t.Errorf("scan piped: want full engine names:\n%v", r)
	}
	r = kubectl(ctx, t, "longhorn-engines", "describe", stuckVolume)
	if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(stale) + `\s`).MatchString(r.Stdout) {
		t.Errorf("describe: want the engine's full name in its table:\n%v", r)
	}
	for _, name := range []string{survivor, stale} {
		if g := kubectl(ctx, t, "get", "engines.longhorn.io", "-n", cluster.Namespace(), name); g.Code != 0 {
			t.Errorf("the name scan printed does not work with kubectl get:\n%v", g)
		}
	}
	r = kubectl(ctx, t, "longhorn-engines", "scan", "pvc-fine", "-o", "name")
	if r.Code != 0 || r.Stdout != "volume.longhorn.io/pvc-fine\n" {
		t.Errorf("scan pvc-fine -o name: want the volume named:\n%v", r)
	}
	r = kubectl(ctx, t, "longhorn-engines", "scan", "pvc-fine")
	if r.Code != 0 || !strings.Contains(r.Stdout, "pvc-fine") || !strings.Contains(r.Stdout, "Healthy") {
		t.Errorf("scan pvc-fine: want a Healthy row:\n%v", r)
	}
}

// Item 5: the prompt before a write names the kubeconfig context and the
// server, in a real terminal; answering no changes nothing.
func TestPromptNamesTheCluster(t *testing.T) {
	if skipReason != "" {
		t.Skip(skipReason)
	}
	ctx := begin(t)
	create(ctx, t, stuck())
	p := newPane(t, paneColumns)
	plugin := filepath.Join(binDir, pluginName)
	line := fmt.Sprintf("env HOME=%s NO_COLOR=1 %s --kubeconfig %s fix %s", filepath.Join(work, "home"), plugin, cluster.KubeconfigPath(), stuckVolume)
	p.tmux("send-keys", "-t", "t", "clear; "+line+"; echo DONE-1 EXIT=$?", "Enter")
	deadline := time.Now().Add(90 * time.Second)
	var screen string
	for !strings.Contains(screen, "[y/N]") {
		if time.Now().After(deadline) {
			t.Fatalf("no prompt after 90s:\n%s", screen)
		}
		screen = p.tmux("capture-pane", "-t", "t", "-p", "-J")
		pause(ctx)
	}
	raw, err := os.ReadFile(cluster.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	ctxName := regexp.MustCompile(`(?m)^current-context:\s*(\S+)`).FindSubmatch(raw)
	if ctxName == nil {
		t.Fatalf("no current-context in the test kubeconfig")
	}
	want := fmt.Sprintf("context %q, server %s", strings.Trim(string(ctxName[1]), `"`), cluster.Host())
	if !strings.Contains(screen, want) {
		t.Errorf("the prompt does not name %s:\n%s", want, screen)
	}
	p.tmux("send-keys", "-t", "t", "n", "Enter")
	for !strings.Contains(screen, "DONE-1 EXIT=") {
		if time.Now().After(deadline) {
			t.Fatalf("no exit after answering no:\n%s", screen)
		}
		screen = p.tmux("capture-pane", "-t", "t", "-p", "-J")
		pause(ctx)
	}
	if !strings.Contains(screen, "DONE-1 EXIT=1") || !engineActive(ctx, t, stale) {
		t.Errorf("answering no: want exit 1 and nothing changed:\n%s", screen)
	}
}

// pause is the interval between two looks at the pane.
func pause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(100 * time.Millisecond):
	}
}

// Item 11: the smaller things an operator meets in the first hour.
func TestFirstHourOdds(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())

	// No kubeconfig: say so, never try localhost:8080.
	r := kubectlAs(ctx, t, filepath.Join(t.TempDir(), "none"), "longhorn-engines", "scan")
	if r.Code != 2 || !strings.Contains(r.Stderr, "no kubeconfig") || strings.Contains(r.Stderr, "8080") {
		t.Errorf("scan without a kubeconfig:\n%v", r)
	}
	// A link a krew user can open, never a repo path.
	r = kubectlAs(ctx, t, userWith(t), "longhorn-engines", "scan")
	if r.Code != 2 || !strings.Contains(r.Stderr, docs.RBAC) {
		t.Errorf("forbidden: want the link %s:\n%v", docs.RBAC, r)
	}
	// A namespace without Longhorn says where Longhorn is.
	r = kubectl(ctx, t, "longhorn-engines", "scan", "-n", "default")
	if r.Code != 2 || !strings.Contains(r.Stderr, "use -n "+cluster.Namespace()) {
		t.Errorf("scan -n default: want where Longhorn is:\n%v", r)
	}
	// -n completes namespaces, not file names.
	got, directive := complete(t, kubectl(ctx, t, "__complete", "longhorn-engines", "scan", "-n", ""))
	if directive != ":4" || !strings.Contains(strings.Join(got, " "), cluster.Namespace()) {
		t.Errorf("-n completion: %q %s, want namespaces and no files", got, directive)
	}
	// The root help's own list of the commands names describe (cobra's
	// "Available Commands" below it always did); each help text says what
	// it waits for.
	r = kubectl(ctx, t, "longhorn-engines", "--help")
	intro, _, _ := strings.Cut(r.Stdout, "\nUsage:")
	if !regexp.MustCompile(`(?m)^\s+describe\s`).MatchString(intro) {
		t.Errorf("root help's list of commands omits describe:\n%s", r.Stdout)
	}
	r = kubectl(ctx, t, "longhorn-engines", "migrate", "rollback", "--help")
	if strings.Contains(r.Stdout, "migration engine to be ready") {
		t.Errorf("migrate rollback --timeout has the migrate step's text:\n%s", r.Stdout)
	}
	// No repo paths, no Markdown, no class codes on a terminal's lines.
	r = kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--dry-run=client")
	out := r.Stdout + r.Stderr
	if strings.Contains(out, "`") || strings.Contains(out, "(L14a)") {
		t.Errorf("fix --dry-run=client prints Markdown or a class code:\n%v", r)
	}
	r = kubectl(ctx, t, "longhorn-engines", "scan")
	if strings.Contains(r.Stderr, "`") {
		t.Errorf("scan's summary has Markdown:\n%v", r)
	}
}

// Item 11: a guard for a volume that does not exist stops with exit 2 and
// leaves no backup folder behind.
func TestGuardForAMissingVolumeLeavesNothing(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, kubectlPath, "longhorn-engines", "fix", "--watch", "--yes", "--for", "1m", "no-such-volume")
	cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "KUBECONFIG=" + cluster.KubeconfigPath(), "HOME=" + filepath.Join(work, "home"), "NO_COLOR=1"}
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "no-such-volume") {
		t.Errorf("fix --watch no-such-volume: %v, want exit 2 naming the volume:\n%s", err, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("fix --watch for a missing volume left %d entries in the working directory", len(entries))
	}
}

// Item 11: --field-manager, as kubectl's writing commands have it, names
// the writer in managedFields of every object fix writes; an empty one is
// a usage error before anything is read or written.
func TestFieldManagerNamesTheWriter(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	r := kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--yes", "--field-manager=")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--field-manager must not be empty") || !engineActive(ctx, t, stale) {
		t.Errorf("an empty --field-manager: want exit 2 and nothing written:\n%v", r)
	}
	const manager = "upgrade-window-42"
	r = kubectl(ctx, t, "longhorn-engines", "fix", stuckVolume, "--yes", "--wait=false", "--field-manager="+manager,
		"--backup-dir", filepath.Join(t.TempDir(), "backup"))
	if r.Code != 0 {
		t.Fatalf("fix --field-manager:\n%v", r)
	}
	// The replica writes come first and the replicas stay (the engine may
	// already be gone: Longhorn removes it once it is inactive).
	list, err := cluster.Dynamic().Resource(longhorn.Replicas.GVR()).Namespace(cluster.Namespace()).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	managers := map[string]bool{}
	for _, it := range list.Items {
		for _, mf := range it.GetManagedFields() {
			managers[mf.Manager] = true
		}
	}
	if !managers[manager] || managers["kubectl-longhorn-engines"] {
		t.Errorf("replicas' field managers %v: want %q and not the default", managers, manager)
	}
}

// Item 7: scan, describe and fix say the same about a clean-up that has
// gone on longer than --pending-threshold: the finding's own reason, a
// warning, nothing written; never "still working on it" beside a warning.
func TestOverdueCleanupSaidAlike(t *testing.T) {
	ctx := begin(t)
	const vol = "pvc-cleanup"
	create(ctx, t, testenv.PendingCleanup(stuckVersion, vol))
	var f struct {
		Type     string `json:"type"`
		Severity string `json:"severity"`
		Action   string `json:"action"`
		Reason   string `json:"reason"`
	}
	// The clean-up started when the objects were created: wait until it
	// has lasted longer than the threshold.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := kubectl(ctx, t, "longhorn-engines", "scan", vol, "-o", "json", "--pending-threshold", "1s")
		var rep struct {
			Findings []json.RawMessage `json:"findings"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Findings) != 1 {
			t.Fatalf("scan -o json: %v\n%v", err, r)
		}
		if err := json.Unmarshal(rep.Findings[0], &f); err != nil {
			t.Fatal(err)
		}
		if f.Severity == "warning" || time.Now().After(deadline) {
			break
		}
	}
	if f.Type != "PendingCleanup" || f.Severity != "warning" {
		t.Fatalf("scan: %+v, want a PendingCleanup warning once it lasts", f)
	}
	// the reason's first clause, as each command prints it, up to how long
	// it has waited (which moves between the commands)
	clause, _, _ := strings.Cut(f.Reason, ";")
	clause, _, _ = strings.Cut(clause, " (for ")
	desc := kubectl(ctx, t, "longhorn-engines", "describe", vol, "--pending-threshold", "1s")
	if !strings.Contains(desc.Stdout, clause) || strings.Contains(desc.Stdout, "still working on it") {
		t.Errorf("describe does not say what scan says (%q):\n%v", clause, desc)
	}
	dry := kubectl(ctx, t, "longhorn-engines", "fix", vol, "--dry-run=client", "--pending-threshold", "1s")
	if !strings.Contains(dry.Stdout+dry.Stderr, clause) || !strings.Contains(dry.Stdout, "lasted longer than 1s") {
		t.Errorf("fix --dry-run does not say what scan says (%q, lasted longer than 1s):\n%v", clause, dry)
	}
	if !engineActive(ctx, t, testenv.EngineName(stuckVersion, vol, 0)) {
		t.Error("a dry run changed the engine")
	}
	if r := kubectl(ctx, t, "longhorn-engines", "fix", "--watch", "--pending-threshold", "1s", vol); r.Code != 2 {
		t.Errorf("fix --watch --pending-threshold: want a usage error:\n%v", r)
	}
}
