package preflight

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
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

// printDrain writes, node by node, what holds the drain: the
// instance-manager budgets and the processes behind them.
func printDrain(b *strings.Builder, nodes []detect.NodeDrain) error {
	fmt.Fprintf(b, "\nWhat holds each node's drain (instance-manager PodDisruptionBudgets, docs/troubleshooting-migration-family.md):\n")
	if len(nodes) == 0 {
		b.WriteString("  no instance manager found\n")
		return nil
	}
	tw := tabwriter.NewWriter(b, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "NODE\tPDB\tPROCESS\tVOLUME\tFINDING")
	for _, n := range nodes {
		pdb := "-"
		if len(n.PDBs) > 0 {
			var ps []string
			for _, p := range n.PDBs {
				ps = append(ps, fmt.Sprintf("%s (%d allowed)", p.Name, p.DisruptionsAllowed))
			}
			pdb = strings.Join(ps, ", ")
		}
		if len(n.Processes) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\n", n.Node, pdb)
		}
		for _, p := range n.Processes {
			finding := dash(string(p.Finding))
			if p.Orphan {
				finding = "orphan (no " + map[string]string{"engine": "Engine", "replica": "Replica"}[p.Kind] + " CR)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s %s\t%s\t%s\n", n.Node, pdb, p.Kind, p.Name, dash(p.Volume), finding)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range nodes {
		for _, c := range n.NotChecked {
			fmt.Fprintf(b, "  %s: not checked: %s\n", n.Node, c)
		}
	}
	return nil
}
