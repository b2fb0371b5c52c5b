package cmdutil

import (
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
