package readstate

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// PDBsResource is policy/v1 PodDisruptionBudgets.
var PDBsResource = schema.GroupVersionResource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"}

// pdbHint says how to let the drain view read the budgets.
const pdbHint = "grant list on poddisruptionbudgets in the Longhorn namespace (Role longhorn-engines-scan in deploy/rbac-scan.yaml; docs/rbac.md)"

// ReadPDBs lists the PodDisruptionBudgets of the Longhorn namespace. Like
// ReadPods it never fails: a read that did not happen is a ReadStatus
// saying why, and err is worth a warning (nil for forbidden and not served).
func ReadPDBs(ctx context.Context, dyn dynamic.Interface, ns string) ([]longhorn.PDB, longhorn.ReadStatus, error) {
	out, err := listConverted(ctx, dyn.Resource(PDBsResource).Namespace(ns), "poddisruptionbudget", (*pdbObject).pdb)
	if err != nil {
		st, warn := degraded(err, "poddisruptionbudgets")
		if !st.Failed {
			st.Hint = pdbHint
		}
		if warn != nil {
			warn = fmt.Errorf("poddisruptionbudgets not read, what holds each node's drain is not checked: %w", err)
		}
		return nil, st, warn
	}
	return out, longhorn.ReadStatus{Read: true}, nil
}

// pdbObject is the part of a PodDisruptionBudget that is decoded.
type pdbObject struct {
	Metadata struct {
		Namespace string `json:"namespace,omitempty"`
		Name      string `json:"name,omitempty"`
	} `json:"metadata"`
	Spec struct {
		// an int or a percentage
		MinAvailable any `json:"minAvailable,omitempty"`
		Selector     *struct {
			MatchLabels map[string]string `json:"matchLabels,omitempty"`
		} `json:"selector,omitempty"`
	} `json:"spec"`
	Status struct {
		DisruptionsAllowed int64 `json:"disruptionsAllowed,omitempty"`
	} `json:"status"`
}

func (o *pdbObject) pdb() longhorn.PDB {
	p := longhorn.PDB{Namespace: o.Metadata.Namespace, Name: o.Metadata.Name, DisruptionsAllowed: int(o.Status.DisruptionsAllowed)}
	if o.Spec.MinAvailable != nil {
		p.MinAvailable = fmt.Sprint(o.Spec.MinAvailable)
	}
	if o.Spec.Selector != nil {
		p.MatchLabels = o.Spec.Selector.MatchLabels
	}
	return p
}
