package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Issue #32 item 11, the parts about how the plugin's text reads: a passed
// check's evidence, describe's Why on a terminal and in a pipe, durations,
// and `make build`'s output folder.

// Item 11: a ✓ line never reads as its own contradiction. On Longhorn 1.5.0
// and 1.5.1 a stuck confirm leaves status.currentMigrationNodeID set to the
// node that now serves; "no migration is in flight" passes for it, and its
// evidence must say why, not show a set migration field alone. The same
// for a pending attach to the current node.
func TestPassedCheckShowsWhyItPassed(t *testing.T) {
	ctx := begin(t)
	const version = "v1.5.1"
	o := testenv.TwoActiveEngines(version, stuckVolume)
	o.Volumes[0].Status.PendingNodeID = testenv.NodeB
	create(ctx, t, o)
	r := kubectl(ctx, t, "longhorn-engines", "describe", stuckVolume)
	for _, c := range []struct{ check, field string }{
		{"no migration is in flight", "status.currentMigrationNodeID"},
		{"no attach is pending on another node", "status.pendingNodeID"},
	} {
		m := regexp.MustCompile(`(?m)^\s*(✓|✗) ` + regexp.QuoteMeta(c.check) + `\s+(.*)$`).FindStringSubmatch(r.Stdout)
		if m == nil {
			t.Errorf("describe has no %q line:\n%v", c.check, r)
			continue
		}
		if m[1] != "✓" || !strings.Contains(m[2], c.field+`="`+testenv.NodeB+`"`) {
			t.Errorf("%q: want ✓ with %s=%q (the scenario):\n%s", c.check, c.field, testenv.NodeB, m[0])
			continue
		}
		if !strings.Contains(m[2], "current node") {
			t.Errorf("%q passes beside %s=%q without saying that is the current node, so it reads as its own contradiction:\n%s",
				c.check, c.field, testenv.NodeB, m[0])
		}
	}

	// A check that was not made is never ✓: with the release unknown, the
	// extra-replica clean-up has no writes to be judged for.
	if err := cluster.Dynamic().Resource(longhorn.Settings.GVR()).Namespace(cluster.Namespace()).Delete(ctx, longhorn.VersionSetting, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r = kubectl(ctx, t, "longhorn-engines", "describe", stuckVolume)
	if !strings.Contains(r.Stdout, "✗ Longhorn version is known") {
		t.Errorf("describe without the version setting: want the version check failed:\n%v", r)
	}
	for _, l := range strings.Split(r.Stdout, "\n") {
		if strings.Contains(l, "✓ ") && notMade.MatchString(l) {
			t.Errorf("a ✓ line whose evidence says the check was not made: %q", l)
		}
	}
}

// notMade is evidence that says a check was not made.
var notMade = regexp.MustCompile(`\bnot (checked|evaluated)\b`)

// continued is a line of a describe value wrapped under its key.
var continued = regexp.MustCompile(`^ {20,}\S`)

// whyLines is describe's Why: its first line and the continuation lines
// indented under its value.
func whyLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(strings.TrimLeft(l, " "), "Why:") && len(lines) == 0:
			lines = append(lines, l)
		case len(lines) > 0 && continued.MatchString(l):
			lines = append(lines, l)
		case len(lines) > 0:
			return lines
		}
	}
	return lines
}

// Item 11: describe's Why wraps to the terminal it is shown on, as a
// paragraph under its key, and not at all in a pipe (kubectl's describe
// leaves long values whole for grep and less).
func TestDescribeWhyFitsTheTerminal(t *testing.T) {
	if skipReason != "" {
		t.Skip(skipReason)
	}
	ctx := begin(t)
	create(ctx, t, stuck())

	// In a pipe: the whole reason on the Why line.
	r := kubectl(ctx, t, "longhorn-engines", "scan", stuckVolume, "-o", "json")
	var rep struct {
		Findings []struct {
			Reason string `json:"reason"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil || len(rep.Findings) != 1 {
		t.Fatalf("scan -o json: %v\n%v", err, r)
	}
	reason := rep.Findings[0].Reason
	if len(reason) < 200 {
		t.Fatalf("the scenario's reason is too short to wrap: %q", reason)
	}
	r = kubectl(ctx, t, "longhorn-engines", "describe", stuckVolume)
	why := whyLines(r.Stdout)
	if len(why) != 1 || !strings.HasSuffix(why[0], reason) {
		t.Errorf("piped describe: want the whole reason on the Why line, got %d line(s):\n%s", len(why), strings.Join(why, "\n"))
	}

	// On a terminal: each line within the pane's width (capture-pane -J
	// joins what the terminal wrapped), the reason all there.
	for _, width := range []int{80, 160} {
		p := newPane(t, width)
		line := fmt.Sprintf("env PATH=%s:/usr/bin:/bin HOME=%s NO_COLOR=1 KUBECONFIG=%s kubectl longhorn-engines describe %s",
			binDir, filepath.Join(work, "home"), cluster.KubeconfigPath(), stuckVolume)
		plain := escape.ReplaceAllString(p.run(ctx, line), "")
		why := whyLines(plain)
		if exitOf(plain) != "0" && exitOf(plain) != "1" || len(why) < 2 {
			t.Errorf("%d columns: want describe's Why over several lines:\n%s", width, plain)
			continue
		}
		longest := 0
		var words []string
		for _, l := range why {
			longest = max(longest, utf8.RuneCountInString(strings.TrimRight(l, " ")))
			words = append(words, strings.Fields(l)...)
		}
		if longest > width {
			t.Errorf("%d columns: a Why line of %d columns, wrapped by the terminal instead of under its key:\n%s", width, longest, strings.Join(why, "\n"))
		}
		if longest < width-25 {
			t.Errorf("%d columns: Why wraps at %d columns, not at the terminal's width:\n%s", width, longest, strings.Join(why, "\n"))
		}
		if got := strings.Join(words[1:], " "); got != strings.Join(strings.Fields(reason), " ") {
			t.Errorf("%d columns: Why is not the whole reason:\n got %q\nwant %q", width, got, reason)
		}
	}
}

// ageToken is a duration as the plugin prints one: 52s, 1m0s, 1m0.001s,
// 350ms.
const ageToken = `\d+(?:\.\d+)?(?:h|m|s|ms|µs|ns)(?:\d+(?:\.\d+)?(?:m|s|ms))*`

var (
	wholeSeconds = regexp.MustCompile(`^(\d+h)?(\d+m)?\d+s$`)
	forAge       = regexp.MustCompile(`\bfor (` + ageToken + `)`)
	ageInParens  = regexp.MustCompile(`\((?:for )?` + ageToken + `\)`)
)

// Item 11: a duration is said once per line and in whole seconds: never
// "(52s) … (for 52s)" in scan's rows or fix's outcome, never
// "for 1m0.001s" in the guard's lines and summary.
func TestDurationsOnceAndWhole(t *testing.T) {
	ctx := begin(t)
	const cleanup = "pvc-cleanup"
	create(ctx, t, stuck(), testenv.PendingCleanup(stuckVersion, cleanup))

	// once is the check of one command's lines about the clean-up.
	once := func(args []string, r result) {
		t.Helper()
		seen := 0
		for _, l := range strings.Split(r.Stdout+r.Stderr, "\n") {
			if !strings.Contains(l, cleanup) && !strings.Contains(l, "being deleted") {
				continue
			}
			ages := ageInParens.FindAllString(l, -1)
			seen += len(ages)
			if len(ages) > 1 {
				t.Errorf("%v: the clean-up's age %d times on one line: %q", args, len(ages), l)
			}
			for _, a := range forAge.FindAllStringSubmatch(l, -1) {
				if !wholeSeconds.MatchString(a[1]) {
					t.Errorf("%v: %q is not in whole seconds: %q", args, a[0], l)
				}
			}
		}
		if seen == 0 {
			t.Errorf("%v: the clean-up's age is not shown:\n%v", args, r)
		}
	}
	for _, args := range [][]string{{"scan"}, {"scan", "-o", "wide"}} {
		once(args, kubectl(ctx, t, append([]string{"longhorn-engines"}, args...)...))
	}

	// The guard: its window, how long a volume stayed unrepaired and the
	// summary, in whole seconds.
	cmd := exec.CommandContext(ctx, kubectlPath, "longhorn-engines", "fix", "--watch", "--dry-run=client", "--for", "3s", "--settle", "10m")
	cmd.Env = []string{"PATH=" + binDir + ":/usr/bin:/bin", "KUBECONFIG=" + cluster.KubeconfigPath(), "HOME=" + filepath.Join(work, "home"), "NO_COLOR=1"}
	cmd.Dir = t.TempDir()
	out, _ := cmd.CombinedOutput()
	ages := forAge.FindAllStringSubmatch(string(out), -1)
	summary := regexp.MustCompile(`(?m)Summary: watched namespace \S+ for ` + ageToken).FindString(string(out))
	if summary == "" || !strings.Contains(string(out), "needs attention") || len(ages) < 3 {
		t.Fatalf("fix --watch --for 3s: want a summary and the stuck volume needing attention:\n%s", out)
	}
	for _, a := range ages {
		if !wholeSeconds.MatchString(a[1]) {
			t.Errorf("fix --watch: %q is not in whole seconds:\n%s", a[0], out)
		}
	}

	// By now the clean-up has lasted longer than 1s: fix's outcome says
	// it is overdue, and for how long once.
	args := []string{"fix", cleanup, "--dry-run=client", "--pending-threshold", "1s"}
	r := kubectl(ctx, t, append([]string{"longhorn-engines"}, args...)...)
	if !strings.Contains(r.Stdout+r.Stderr, "overdue") {
		t.Errorf("%v: want the clean-up overdue:\n%v", args, r)
	}
	once(args, r)
}

// Item 11: `make build` puts the completion shim beside the plugin, where
// kubectl looks for it, so TAB works from the build folder on PATH. The
// compiler is stood in for by a copy of the plugin under test: the test is
// about the Makefile's build folder, not a second compile.
func TestMakeBuildPutsTheShimBesideThePlugin(t *testing.T) {
	ctx := begin(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	tmp := t.TempDir()
	goStub := filepath.Join(tmp, "go")
	called := filepath.Join(tmp, "called")
	stub := fmt.Sprintf(`#!/bin/sh
# go build ... -o OUT PKG: note the environment and arguments, copy the
# plugin under test to OUT
[ "$1" = build ] || { echo "go stub: only build, got: $*" >&2; exit 2; }
env >'%[2]s.env'
printf '%%s\n' "$@" >'%[2]s.args'
while [ $# -gt 0 ]; do
	if [ "$1" = -o ]; then exec cp '%[1]s' "$2"; fi
	shift
done
echo "go stub: no -o" >&2; exit 2
`, filepath.Join(binDir, pluginName), called)
	if err := os.WriteFile(goStub, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "bin")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	mk := exec.CommandContext(ctx, "make", "-C", moduleRoot, "build", "GO="+goStub, "BIN="+filepath.Join(out, pluginName))
	// Not the variables of a `make test` this runs under.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
			mk.Env = append(mk.Env, kv)
		}
	}
	if b, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, b)
	}
	// The release's env and flags, or the release snapshot compiles the
	// plugin a second time in CI (testenv.BuildPlugin).
	rb, err := testenv.ReadReleaseBuild()
	if err != nil {
		t.Fatal(err)
	}
	env, _ := os.ReadFile(called + ".env")
	args, _ := os.ReadFile(called + ".args")
	for _, kv := range rb.Env {
		if !slices.Contains(strings.Split(string(env), "\n"), kv) {
			t.Errorf("make build runs go without %s (.goreleaser.yaml's env)", kv)
		}
	}
	for _, f := range rb.Flags {
		if !slices.Contains(strings.Split(string(args), "\n"), f) {
			t.Errorf("make build runs go without %s (.goreleaser.yaml's flags); got %q", f, args)
		}
	}
	if !executable(filepath.Join(out, shimName)) {
		t.Errorf("make build left no executable %s beside %s", shimName, pluginName)
	}
	r := kubectlWith(ctx, t, out, cluster.KubeconfigPath(), "__complete", "longhorn-engines", "")
	if got, _ := complete(t, r); !strings.Contains(strings.Join(got, " "), "describe") {
		t.Errorf("kubectl __complete longhorn-engines with make build's folder on PATH: %q, want the plugin's commands", got)
	}
}
