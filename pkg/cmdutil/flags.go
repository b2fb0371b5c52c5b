package cmdutil

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Namespace is the Longhorn namespace: -n when given, otherwise
// longhorn-system. The kubeconfig context's namespace is deliberately ignored:
// it names where the user's workloads live, rarely where Longhorn does.
func Namespace(cf *genericclioptions.ConfigFlags) string {
	if cf != nil && cf.Namespace != nil && *cf.Namespace != "" {
		return *cf.Namespace
	}
	return longhorn.DefaultNamespace
}

// DefaultFieldManager names the tool in managedFields of what it writes, so
// that `kubectl get -o yaml --show-managed-fields` shows who changed a flag.
const DefaultFieldManager = "kubectl-longhorn-engines"

// AddFieldManagerFlag adds --field-manager, as kubectl's writing commands
// have it, to every command of this tool that writes.
func AddFieldManagerFlag(c *cobra.Command, p *string) {
	c.Flags().StringVar(p, "field-manager", *p, "Name of the manager used to track field ownership of what this command writes")
}

// ValidateFieldManager checks --field-manager as the API server would (it
// refuses a manager name over 128 characters), before anything is written.
func ValidateFieldManager(v string) error {
	switch {
	case v == "":
		return errors.New("--field-manager must not be empty")
	case len(v) > 128:
		return fmt.Errorf("--field-manager is %d characters long; the API server accepts at most 128", len(v))
	}
	return nil
}
