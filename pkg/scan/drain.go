package scan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// PrintDrain writes, node by node, what holds each node's drain: the
// instance-manager PodDisruptionBudgets and every engine and replica
// process behind them, with the finding of its volume; orphans are marked,
// and what could not be read is said, never shown as an empty list.
// preflight prints the same section.
func PrintDrain(out io.Writer, nodes []detect.NodeDrain) error {
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
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
			fmt.Fprintf(out, "  %s: not checked: %s\n", n.Node, c)
		}
	}
	return nil
}

// knownNode reports whether any object read places something on node.
func knownNode(st *longhorn.State, node string) bool {
	for i := range st.Nodes {
		if st.Nodes[i].Name == node {
			return true
		}
	}
	for i := range st.InstanceManagers {
		if st.InstanceManagers[i].Spec.NodeID == node {
			return true
		}
	}
	for i := range st.Engines {
		if st.Engines[i].Spec.NodeID == node {
			return true
		}
	}
	for i := range st.Replicas {
		if st.Replicas[i].Spec.NodeID == node {
			return true
		}
	}
	return false
}

// nodeDrainReport is `scan --node NODE -o json`.
type nodeDrainReport struct {
	cmdutil.ReportMeta
	Namespace string           `json:"namespace"`
	Node      detect.NodeDrain `json:"node"`
	// Findings are the findings of the volumes with a process on the node.
	Findings []detect.Finding `json:"findings"`
}

// printNode is `scan --node NODE`: why that node's drain hangs. Exit 1
// when a process there has a finding that needs attention or is an
// orphan, 2 when something could not be checked or the node is unknown.
func (o *Options) printNode(st *longhorn.State, res detect.Result) error {
	if !knownNode(st, o.Node) && st.InstanceManagersRead {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("node %q has no instance manager, engine or replica in namespace %s", o.Node, st.Namespace))
	}
	view := detect.DrainView(st, res, o.Node)
	n := view[0]
	vols := map[string]bool{}
	attention := false
	for _, p := range n.Processes {
		vols[p.Volume] = true
		attention = attention || p.Orphan || p.Severity.NeedsAttention()
	}
	var findings []detect.Finding
	for _, f := range res.Findings {
		if vols[f.Volume] {
			findings = append(findings, f)
		}
	}
	switch o.Output {
	case "json":
		if findings == nil {
			findings = []detect.Finding{}
		}
		if err := cmdutil.PrintJSON(o.Out, nodeDrainReport{ReportMeta: cmdutil.NewReportMeta("NodeDrainReport"), Namespace: st.Namespace, Node: n, Findings: findings}); err != nil {
			return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
		}
	default:
		if err := PrintDrain(o.Out, view); err != nil {
			return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
		}
		for _, f := range findings {
			fmt.Fprintf(o.Out, "  %s: %s (%s): %s\n", f.Volume, f.Type, f.Severity, f.Reason)
			if f.Family != nil {
				fmt.Fprintf(o.Out, "    maintainers' repair: kubectl longhorn-engines describe %s -n %s (%s)\n", f.Volume, st.Namespace, f.Family.Doc)
			}
		}
	}
	if len(n.NotChecked) > 0 {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("could not check what holds node %s's drain: %s", o.Node, strings.Join(n.NotChecked, "; ")))
	}
	if attention {
		return cmdutil.Silent(cmdutil.ExitNeedsAction)
	}
	return nil
}
