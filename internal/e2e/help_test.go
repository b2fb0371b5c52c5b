package e2e

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
)

// walk calls f for every command a user can reach.
func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			walk(sub, f)
		}
	}
}

func newRoot() *cobra.Command {
	var out bytes.Buffer
	return cmd.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out})
}

// Every command shows examples, written as the user types them.
func TestEveryCommandHasExamples(t *testing.T) {
	n := 0
	walk(newRoot(), func(c *cobra.Command) {
		if !c.Runnable() {
			return
		}
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Example", c.CommandPath())
		}
		binaryPath := strings.Replace(c.CommandPath(), "kubectl longhorn-engines", pluginName, 1)
		if !strings.Contains(c.Example, c.CommandPath()+" ") && !strings.Contains(c.Example, binaryPath+" ") &&
			!strings.HasSuffix(strings.TrimSpace(c.Example), c.CommandPath()) {
			t.Errorf("%q: no example runs it:\n%s", c.CommandPath(), c.Example)
		}
	})
	if n < 6 {
		t.Errorf("walked %d runnable commands, expected scan, fix, migrate (+ confirm, rollback, status), version, completion", n)
	}
}

// Usage and command paths read `kubectl longhorn-engines ...`.
func TestHelpReadsAsKubectlPlugin(t *testing.T) {
	walk(newRoot(), func(c *cobra.Command) {
		if !strings.HasPrefix(c.CommandPath(), "kubectl longhorn-engines") {
			t.Errorf("command path %q", c.CommandPath())
		}
		if c.Runnable() && !strings.HasPrefix(c.UseLine(), "kubectl longhorn-engines") {
			t.Errorf("usage line %q", c.UseLine())
		}
		if c.Short == "" {
			t.Errorf("%q has no short description", c.CommandPath())
		}
	})
}

// Of klog's flags only -v is visible; errors are printed once by Execute,
// never by cobra, and usage is not dumped on errors.
func TestRootFlagsAndErrorHandling(t *testing.T) {
	root := newRoot()
	if f := root.PersistentFlags().Lookup("v"); f == nil || f.Shorthand != "v" || f.Hidden {
		t.Errorf("-v missing or hidden: %+v", f)
	}
	for _, name := range []string{"logtostderr", "alsologtostderr", "vmodule", "log_dir", "log_file", "skip_headers", "stderrthreshold", "add_dir_header", "one_output"} {
		if f := root.Flags().Lookup(name); f != nil && !f.Hidden {
			t.Errorf("klog flag --%s is visible", name)
		}
		if f := root.PersistentFlags().Lookup(name); f != nil && !f.Hidden {
			t.Errorf("klog flag --%s is visible", name)
		}
	}
	if !root.SilenceErrors || !root.SilenceUsage {
		t.Errorf("SilenceErrors=%v SilenceUsage=%v, want both: Execute prints the one error line", root.SilenceErrors, root.SilenceUsage)
	}
}
