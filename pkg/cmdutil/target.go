package cmdutil

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Target names the cluster a command is about to write to: the kubeconfig
// context (after --context) and the API server (after --server). A prompt
// before a write carries it, so an operator with several clusters sees
// which one the answer applies to. Empty when neither can be told.
func Target(cf *genericclioptions.ConfigFlags) string {
	if cf == nil {
		return ""
	}
	context, server := "", ""
	if raw, err := cf.ToRawKubeConfigLoader().RawConfig(); err == nil {
		context = raw.CurrentContext
		if cf.Context != nil && *cf.Context != "" {
			context = *cf.Context
		}
	}
	if rc, err := cf.ToRESTConfig(); err == nil {
		server = rc.Host
	}
	switch {
	case context != "" && server != "":
		return fmt.Sprintf("context %q, server %s", context, server)
	case server != "":
		return "server " + server
	case context != "":
		return fmt.Sprintf("context %q", context)
	}
	return ""
}
