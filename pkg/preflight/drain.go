package preflight

import (
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// pdbUnchecked names the drain check when the budgets could not be read
// for want of a permission or through an error: the view then cannot say
// whether a node's drain is held. An API server that does not serve
// policy/v1 (the CRD-only test server) is not a Kubernetes cluster the
// drain happens on, and a bundle without budgets says so in the view.
func pdbUnchecked(st *longhorn.State) []string {
	r := st.PDBsRead
	if r.Read || r.Note == "" || strings.Contains(r.Note, "not served") {
		return nil
	}
	return []string{"what holds each node's drain (" + r.Note + "; " + r.Hint + ")"}
}
