package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// What an operator sees in a real terminal: the plugin runs in a tmux pane
// of a known size against the simulated cluster, and the pane is captured
// with its attributes (capture-pane -e). This is the only test that sees
// colour decided by a real isatty and the table cut by a real TIOCGWINSZ.

const (
	realVolume  = "pvc-7b120d60-1577-4716-be5a-62348271025a" // the #6642 state, repairable
	refusedVol  = "pvc-0c9f1f3e-6a55-4f0d-9d7c-3e2b8f4a1d22" // #4827: no safe repair
	paneColumns = 120
)

var escape = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// pane is one tmux server of the test's own (its own socket), one window.
type pane struct {
	t    *testing.T
	sock string
	runs int
}

func newPane(t *testing.T, width int) *pane {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed: the terminal capture needs it (apt-get install tmux)")
	}
	p := &pane{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	p.tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", fmt.Sprint(width), "-y", "60", "sh")
	p.tmux("set-option", "-g", "remain-on-exit", "on")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", p.sock, "kill-server").Run() })
	return p
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.sock}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// run types a command line into the pane's shell and returns the captured
// pane (with escape codes) once the command has printed its exit status.
func (p *pane) run(ctx context.Context, line string) string {
	p.t.Helper()
	// A marker of this run only: the previous run's may still be on the
	// screen until the shell has read this line.
	p.runs++
	done := regexp.MustCompile(fmt.Sprintf(`(?m)^DONE-%d EXIT=(\d+)`, p.runs))
	p.tmux("send-keys", "-t", "t", fmt.Sprintf("clear; %s; echo DONE-%d EXIT=$?", line, p.runs), "Enter")
	deadline := time.Now().Add(90 * time.Second)
	for {
		out := p.tmux("capture-pane", "-t", "t", "-p", "-e", "-J")
		if done.MatchString(escape.ReplaceAllString(out, "")) {
			return out
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.t.Fatalf("no exit status in the pane after 90s:\n%s", out)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// exit is the exit status the pane shows for the last run.
func exitOf(plain string) string {
	m := regexp.MustCompile(`DONE-\d+ EXIT=(\d+)`).FindAllStringSubmatch(plain, -1)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

func TestTerminalCapture(t *testing.T) {
	if skipReason != "" {
		t.Skip(skipReason)
	}
	p := newPane(t, paneColumns)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const ns = "terminal"
	if err := cluster.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	sim := testenv.StartScenarioSim(ctx, t, cluster.RESTConfig(), ns, "v1.4.3")
	env := &testenv.SimCluster{Sim: sim, Dynamic: cluster.Dynamic()}
	for vol, name := range map[string]string{realVolume: "two-active-engines", refusedVol: "issue-4827"} {
		sc, err := testenv.SelectScenarios([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if err := testenv.Reach(ctx, env, sc[0], vol); err != nil {
			t.Fatal(err)
		}
	}
	plugin := filepath.Join(binDir, pluginName)
	base := fmt.Sprintf("env -u NO_COLOR TERM=xterm-256color HOME=%s %s -n %s --kubeconfig %s", filepath.Join(work, "home"), plugin, ns, cluster.KubeconfigPath())

	t.Run("scan colours by severity and fits the pane", func(t *testing.T) {
		out := p.run(ctx, base+" scan")
		plain := escape.ReplaceAllString(out, "")
		if exitOf(plain) != "1" {
			t.Fatalf("scan of stuck volumes should exit 1:\n%s", plain)
		}
		critical := regexp.MustCompile(`\x1b\[[0-9;]*31[0-9;]*m(\x1b\[[0-9;]*m)*critical`)
		if !critical.MatchString(out) {
			t.Errorf("critical is not red in the pane:\n%q", out)
		}
		// The table rows (stdout); the summary on stderr is a sentence that
		// may wrap like any other.
		for _, l := range strings.Split(plain, "\n") {
			if !strings.HasPrefix(l, "VOLUME") && !strings.HasPrefix(l, "pvc-") {
				continue
			}
			if n := utf8.RuneCountInString(strings.TrimRight(l, " ")); n > paneColumns {
				t.Errorf("line of %d columns in a %d-column pane: %q", n, paneColumns, l)
			}
		}
		for _, want := range []string{realVolume, refusedVol, "KEEP", "e-"} {
			if !strings.Contains(plain, want) {
				t.Errorf("pane lacks %q:\n%s", want, plain)
			}
		}
	})

	t.Run("NO_COLOR and --color=never keep the pane plain", func(t *testing.T) {
		for _, line := range []string{
			strings.Replace(base, "env -u NO_COLOR", "env NO_COLOR=1", 1) + " scan",
			base + " scan --color never",
		} {
			out := p.run(ctx, line)
			if strings.Contains(out, "\x1b[") && regexp.MustCompile(`\x1b\[[0-9;]*3[1-3][0-9;]*m`).MatchString(out) {
				t.Errorf("colour despite %q:\n%q", line, out)
			}
		}
	})

	t.Run("describe marks the failed precondition", func(t *testing.T) {
		out := p.run(ctx, base+" describe "+refusedVol)
		if !regexp.MustCompile(`\x1b\[[0-9;]*31[0-9;]*m(\x1b\[[0-9;]*m)*✗`).MatchString(out) {
			t.Errorf("✗ is not red:\n%q", out)
		}
		if !regexp.MustCompile(`\x1b\[[0-9;]*32[0-9;]*m(\x1b\[[0-9;]*m)*✓`).MatchString(out) {
			t.Errorf("✓ is not green:\n%q", out)
		}
		if !strings.Contains(escape.ReplaceAllString(out, ""), "spec.nodeID is empty: Longhorn does not process this volume's engines (longhorn#4827)") {
			t.Errorf("the failure is not in words:\n%s", escape.ReplaceAllString(out, ""))
		}
	})

	t.Run("fix leaves no progress line behind and none on stdout", func(t *testing.T) {
		stdout := filepath.Join(t.TempDir(), "stdout")
		out := p.run(ctx, fmt.Sprintf("cd %s && %s fix %s --yes --timeout 1m > %s", t.TempDir(), base, realVolume, stdout))
		plain := escape.ReplaceAllString(out, "")
		if exitOf(plain) != "0" {
			t.Fatalf("fix did not repair:\n%s", plain)
		}
		if strings.Contains(plain, "waiting for volume") {
			t.Errorf("a progress line stayed on the screen:\n%s", plain)
		}
		b, err := os.ReadFile(stdout)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "waiting") || strings.Contains(string(b), "\r") || !strings.Contains(string(b), "repaired") {
			t.Errorf("stdout carries progress or lacks the result:\n%q", b)
		}
	})
}
