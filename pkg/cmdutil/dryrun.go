package cmdutil

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DryRun is the --dry-run strategy of every command, with kubectl's values.
type DryRun string

const (
	// DryRunNone changes the cluster.
	DryRunNone DryRun = "none"
	// DryRunClient prints the changes without sending them.
	DryRunClient DryRun = "client"
	// DryRunServer sends the changes with dryRun=All: the API server (and
	// Longhorn's admission webhooks) check them, nothing is persisted.
	DryRunServer DryRun = "server"
)

// DryRunModes are the accepted --dry-run values, for completion.
var DryRunModes = []string{string(DryRunNone), string(DryRunClient), string(DryRunServer)}

// DryRunNoOptValue is what a bare --dry-run parses to, as in kubectl.
const DryRunNoOptValue = "unchanged"

// ParseDryRun reads a --dry-run value as kubectl does, including the
// deprecated booleans (a bare --dry-run and "true" mean client); warning is
// non-empty for those, for the caller to print.
func ParseDryRun(v string) (d DryRun, warning string, err error) {
	switch v {
	case "", string(DryRunNone):
		return DryRunNone, "", nil
	case string(DryRunClient):
		return DryRunClient, "", nil
	case string(DryRunServer):
		return DryRunServer, "", nil
	case DryRunNoOptValue, "true":
		return DryRunClient, "--dry-run is deprecated and can be replaced with --dry-run=client.", nil
	case "false":
		return DryRunNone, "--dry-run=false is deprecated (boolean value) and can be replaced with --dry-run=none.", nil
	}
	return DryRunNone, "", fmt.Errorf(`invalid --dry-run value %q: must be "none", "server", or "client"`, v)
}

// Sent is the dryRun option of a request made under d: All for a server
// dry run, none otherwise. A client dry run makes no request at all; the
// caller prints instead of sending.
func (d DryRun) Sent() []string {
	if d == DryRunServer {
		return []string{metav1.DryRunAll}
	}
	return nil
}

// Suffix is what kubectl appends to a change line.
func (d DryRun) Suffix() string {
	switch d {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}

// DryRunFlag is ParseDryRun for a command's --dry-run flag: a deprecation
// warning goes to warnings as kubectl prints it.
func DryRunFlag(v string, warnings io.Writer) (DryRun, error) {
	d, warning, err := ParseDryRun(v)
	if err == nil && warning != "" {
		fmt.Fprintln(warnings, "warning: "+warning)
	}
	return d, err
}

// AddDryRunFlag adds --dry-run to c: kubectl's values, a bare --dry-run
// (deprecated) and their completion. Every command that writes uses it, so
// the flag parses the same everywhere; only the usage text is its own.
func AddDryRunFlag(c *cobra.Command, p *string, usage string) {
	c.Flags().StringVar(p, "dry-run", *p, usage)
	c.Flags().Lookup("dry-run").NoOptDefVal = DryRunNoOptValue
	EnumCompletion(c, "dry-run", DryRunModes)
}
