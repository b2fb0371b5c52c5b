package cmd_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// Every command with --dry-run parses it the same way: kubectl's values, the
// deprecated booleans with the same warning, the same error for anything
// else. Each run stops at Validate (no volume, or --timeout=0), after
// Complete parsed the flag, so no server is needed.
func TestDryRunParsesTheSameInEveryCommand(t *testing.T) {
	kubeconfig := unreachableKubeconfig(t)
	var commands [][]string
	walk(cmd.NewRootCommand(genericiooptions.NewTestIOStreamsDiscard()), func(c *cobra.Command) {
		f := c.Flags().Lookup("dry-run")
		if f == nil {
			return
		}
		if f.NoOptDefVal != cmdutil.DryRunNoOptValue {
			t.Errorf("%s: a bare --dry-run means %q, want %q", c.CommandPath(), f.NoOptDefVal, cmdutil.DryRunNoOptValue)
		}
		comp, _ := c.GetFlagCompletionFunc("dry-run")
		if comp == nil {
			t.Errorf("%s: --dry-run has no completion", c.CommandPath())
		} else if got, _ := comp(c, nil, ""); strings.Join(got, ",") != strings.Join(cmdutil.DryRunModes, ",") {
			t.Errorf("%s: --dry-run completes to %v, want %v", c.CommandPath(), got, cmdutil.DryRunModes)
		}
		commands = append(commands, path(c))
	})
	commands = append(commands, []string{"fix", "--watch", "--timeout=0"})
	if len(commands) < 5 {
		t.Fatalf("found --dry-run on %v only; fix, fix --watch, migrate, migrate confirm and migrate rollback have it", commands)
	}

	for _, value := range []string{"--dry-run", "--dry-run=true", "--dry-run=false", "--dry-run=none", "--dry-run=client", "--dry-run=server", "--dry-run=maybe"} {
		v, _ := strings.CutPrefix(value, "--dry-run")
		v, _ = strings.CutPrefix(v, "=")
		if value == "--dry-run" {
			v = cmdutil.DryRunNoOptValue
		}
		_, warning, parseErr := cmdutil.ParseDryRun(v)
		for _, args := range commands {
			var out, errOut bytes.Buffer
			streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
			code := cmd.Execute(context.Background(), streams, append(append([]string{}, args...), value, "--kubeconfig", kubeconfig))
			lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			name := strings.Join(args, " ") + " " + value
			if code != cmdutil.ExitNoCheck || out.Len() != 0 || !strings.HasPrefix(last, "error: ") {
				t.Errorf("%s: want exit 2 at validation and nothing on stdout, got exit %d:\n%s%s", name, code, out.String(), errOut.String())
				continue
			}
			if parseErr != nil {
				if want := "error: " + parseErr.Error(); errOut.String() != want+"\n" {
					t.Errorf("%s: stderr %q, want %q", name, errOut.String(), want)
				}
				continue
			}
			if strings.Contains(last, "--dry-run") {
				t.Errorf("%s: the value was refused: %s", name, last)
			}
			gotWarning := strings.Join(lines[:len(lines)-1], "\n")
			if want := map[bool]string{true: "warning: " + warning, false: ""}[warning != ""]; gotWarning != want {
				t.Errorf("%s: warning %q, want %q", name, gotWarning, want)
			}
		}
	}
}

// path is c's words after the root's.
func path(c *cobra.Command) []string {
	if !c.HasParent() {
		return nil
	}
	return append(path(c.Parent()), c.Name())
}

func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// unreachableKubeconfig is a kubeconfig that loads but whose server never
// answers: a command that sent a request would fail differently.
func unreachableKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: nowhere
  context:
    cluster: nowhere
    user: nobody
current-context: nowhere
users:
- name: nobody
  user:
    token: none
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
