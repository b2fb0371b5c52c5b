package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// complete asks kubectl for completions the way a shell does on TAB: kubectl
// runs the kubectl_complete-longhorn_engines shim from PATH, which runs the
// plugin's __complete. It returns the candidates (descriptions cut off) and
// the directive line.
func complete(t *testing.T, r result) (candidates []string, directive string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	if r.Code != 0 || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("no completion answer:\n%v", r)
	}
	for _, l := range lines[:len(lines)-1] {
		c, _, _ := strings.Cut(l, "\t")
		candidates = append(candidates, c)
	}
	return candidates, lines[len(lines)-1]
}

func TestCompletionThroughKubectl(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck(), testenv.Healthy(stuckVersion, "pvc-fine"))

	// :4 is cobra's ShellCompDirectiveNoFileComp: volume names, not files.
	cases := []struct {
		args      []string
		want      []string
		exact     bool // nothing but want
		directive string
	}{
		{[]string{"longhorn-engines", ""}, []string{"scan", "fix", "migrate", "version", "completion"}, false, ""},
		{[]string{"longhorn-engines", "scan", ""}, []string{"pvc-fine", stuckVolume}, true, ":4"},
		{[]string{"longhorn-engines", "scan", "pvc-f"}, []string{"pvc-fine"}, true, ":4"},
		{[]string{"longhorn-engines", "scan", stuckVolume, ""}, []string{"pvc-fine"}, true, ":4"},
		{[]string{"longhorn-engines", "fix", ""}, []string{"pvc-fine", stuckVolume}, true, ":4"},
		{[]string{"longhorn-engines", "migrate", "status", ""}, []string{"pvc-fine", stuckVolume}, true, ":4"},
		{[]string{"longhorn-engines", "scan", "-o", ""}, []string{"table", "wide", "json", "yaml", "name"}, true, ":4"},
		{[]string{"longhorn-engines", "fix", "--strategy", "d"}, []string{"deactivate", "delete"}, false, ":4"}, // the shell filters fixed lists
		{[]string{"longhorn-engines", "scan", "--color", ""}, []string{"auto", "always", "never"}, true, ":4"},
	}
	for _, tc := range cases {
		r := kubectl(ctx, t, append([]string{"__complete"}, tc.args...)...)
		got, directive := complete(t, r)
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("kubectl __complete %q: %q missing from %q", tc.args, w, got)
			}
		}
		if tc.exact && len(got) != len(tc.want) {
			t.Errorf("kubectl __complete %q: got %q, want only %q", tc.args, got, tc.want)
		}
		if tc.directive != "" && directive != tc.directive {
			t.Errorf("kubectl __complete %q: directive %s, want %s", tc.args, directive, tc.directive)
		}
	}
}

// Without the shim on PATH kubectl has nobody to ask: this is why the
// archive ships it and the krew caveats tell users to install it.
func TestCompletionNeedsTheShim(t *testing.T) {
	ctx := begin(t)
	create(ctx, t, stuck())
	pluginOnly := t.TempDir()
	if err := os.Symlink(filepath.Join(binDir, pluginName), filepath.Join(pluginOnly, pluginName)); err != nil {
		t.Fatal(err)
	}
	r := kubectlWith(ctx, t, pluginOnly, cluster.KubeconfigPath(), "__complete", "longhorn-engines", "scan", "")
	if got, _ := complete(t, r); slices.Contains(got, stuckVolume) {
		t.Errorf("volume names completed without the shim: %q", got)
	}
	r = kubectl(ctx, t, "__complete", "longhorn-engines", "scan", "")
	if got, _ := complete(t, r); !slices.Contains(got, stuckVolume) {
		t.Errorf("with the shim: %q lacks %s", got, stuckVolume)
	}
}
