package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubectl finds the plugin under the name krew and the archives install.
func TestPluginList(t *testing.T) {
	ctx := begin(t)
	r := kubectl(ctx, t, "plugin", "list")
	if r.Code != 0 {
		t.Fatalf("kubectl plugin list: %v", r)
	}
	want := filepath.Join(binDir, pluginName)
	if !strings.Contains(r.Stdout, want+"\n") {
		t.Errorf("kubectl plugin list does not show %s:\n%v", want, r)
	}
	// kubectl warns about plugins it cannot run or that another one shadows.
	if strings.Contains(r.Stderr, "warning") {
		t.Errorf("kubectl plugin list warns:\n%v", r)
	}
}

// The release ldflags (.goreleaser.yaml) reach the variables of main that
// `version` prints: a renamed variable would silently print "dev".
func TestVersionCarriesReleaseLdflags(t *testing.T) {
	ctx := begin(t)
	r := kubectl(ctx, t, "longhorn-engines", "version")
	want := "kubectl-longhorn_engines " + buildValues["Version"] + " (commit " + buildValues["Commit"] +
		", built " + buildValues["CommitDate"] + " by goreleaser)\n"
	if r.Code != 0 || r.Stdout != want || r.Stderr != "" {
		t.Errorf("version:\n%v\nwant stdout %q", r, want)
	}
}

// Help reads as the command the user typed, through kubectl.
func TestHelpUsesDisplayName(t *testing.T) {
	ctx := begin(t)
	for _, args := range [][]string{
		{"longhorn-engines", "--help"},
		{"longhorn-engines", "scan", "--help"},
		{"longhorn-engines", "fix", "--help"},
		{"longhorn-engines", "migrate", "status", "--help"},
	} {
		r := kubectl(ctx, t, args...)
		usage := "kubectl " + strings.Join(args[:len(args)-1], " ")
		if r.Code != 0 || !strings.Contains(r.Stdout, "Usage:\n  "+usage) {
			t.Errorf("kubectl %s: want usage line %q:\n%v", strings.Join(args, " "), usage, r)
		}
		if strings.Contains(r.Stdout, pluginName+" ") && args[1] != "completion" {
			t.Errorf("kubectl %s: help names the binary instead of the command:\n%s", strings.Join(args, " "), r.Stdout)
		}
	}
}

// Errors reach the user as one "error: ..." line on stderr, with the
// documented exit code, through kubectl's exec of the plugin.
func TestErrorsAreOneLine(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	unreachable := filepath.Join(t.TempDir(), "kubeconfig")
	writeKubeconfig(t, unreachable, "https://127.0.0.1:1")
	cases := []struct {
		name       string
		kubeconfig string
		args       []string
		code       int
		contains   string
	}{
		{"bad flag value", cluster.KubeconfigPath(), []string{"longhorn-engines", "scan", "-o", "bogus"}, 2, "bogus"},
		// Usage errors are 2, never scan's 1 ("findings").
		{"unknown flag", cluster.KubeconfigPath(), []string{"longhorn-engines", "scan", "--bogus"}, 2, "unknown flag: --bogus"},
		{"mistyped command", cluster.KubeconfigPath(), []string{"longhorn-engines", "scn"}, 2, "(did you mean scan?)"},
		{"missing argument", cluster.KubeconfigPath(), []string{"longhorn-engines", "completion"}, 2, "accepts 1 arg"},
		{"unknown volume", cluster.KubeconfigPath(), []string{"longhorn-engines", "scan", "no-such-volume"}, 2, "no-such-volume"},
		{"unreachable", unreachable, []string{"longhorn-engines", "scan"}, 2, "127.0.0.1:1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := kubectlAs(ctx, t, tc.kubeconfig, tc.args...)
			if r.Code != tc.code {
				t.Errorf("exit %d, want %d:\n%v", r.Code, tc.code, r)
			}
			if !strings.HasPrefix(r.Stderr, "error: ") || strings.Count(r.Stderr, "\n") != 1 || !strings.Contains(r.Stderr, tc.contains) {
				t.Errorf("want one line \"error: ...%s...\" on stderr:\n%v", tc.contains, r)
			}
			if r.Stdout != "" {
				t.Errorf("stdout should be empty on error:\n%v", r)
			}
		})
	}
}

func writeKubeconfig(t *testing.T, path, server string) {
	t.Helper()
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ` + server + `
    insecure-skip-tls-verify: true
users:
- name: u
  user:
    token: t
contexts:
- name: c
  context:
    cluster: c
    user: u
current-context: c
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}
