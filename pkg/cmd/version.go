package cmd

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// Build information, set by the release build with -ldflags -X.
var (
	Version = ""
	Commit  = ""
	Date    = ""
	BuiltBy = ""
)

func newVersionCommand(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the plugin's version",
		Example: "  kubectl longhorn-engines version",
		Args:    cmdutil.UsageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, c, d, b := Version, Commit, Date, BuiltBy
			// go install builds carry no ldflags: fall back to the module's
			// own build information.
			if bi, ok := debug.ReadBuildInfo(); ok {
				if v == "" {
					v = bi.Main.Version
				}
				for _, s := range bi.Settings {
					switch {
					case s.Key == "vcs.revision" && c == "":
						c = s.Value
					case s.Key == "vcs.time" && d == "":
						d = s.Value
					}
				}
			}
			if v == "" || v == "(devel)" {
				v = "dev"
			}
			_, err := fmt.Fprintf(streams.Out, "kubectl-longhorn_engines %s (commit %s, built %s by %s)\n", v, orUnknown(c), orUnknown(d), orUnknown(b))
			return err
		},
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
