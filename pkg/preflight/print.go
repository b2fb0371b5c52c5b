package preflight

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

// Print writes the report in format (table, json or yaml) to out.
func Print(out io.Writer, r *Report, format string) error {
	switch format {
	case "", "table":
		return printTable(out, r)
	case "json":
		return cmdutil.PrintJSON(out, r)
	case "yaml":
		return cmdutil.PrintYAML(out, r)
	}
	return fmt.Errorf("unknown output format %q", format)
}

func printTable(out io.Writer, r *Report) error {
	var b strings.Builder
	// The class code (L14a, ...) is for the JSON report; the note says it in words.
	fmt.Fprintf(&b, "Longhorn %s in %s, from %s: %s\n", r.Release.Version, r.Namespace, r.Source, r.Release.Note)
	if t := r.Target; t != nil {
		fmt.Fprintf(&b, "Upgrade to %s: %s\n", t.Version, t.Note)
		fmt.Fprintf(&b, "Stuck volumes: %s\n", t.StuckNote)
	}

	fmt.Fprintf(&b, "\nVolumes that live-migrate when their node is drained: %d of %d attached\n", r.Summary.Migrating, r.Summary.Attached)
	if len(r.Nodes) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, "NODE\tVOLUME\tENGINE\tROBUSTNESS\tWORKLOAD\tFINDING")
		for _, n := range r.Nodes {
			for _, v := range n.Volumes {
				finding := "-"
				if v.Finding != nil {
					finding = fmt.Sprintf("%s (%s)", v.Finding.Type, v.Finding.Severity)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", n.Node, v.Name, v.DataEngine, dash(v.Robustness), workloadCell(v), finding)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(&b, "\nBlocking a drain now: %d\n", len(r.Blockers))
	if len(r.Blockers) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
		fmt.Fprintln(tw, "VOLUME\tNODE\tSTATE\tRUN")
		for _, bl := range r.Blockers {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", bl.Volume, dash(bl.Node), bl.Type, bl.Command)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, bl := range r.Blockers {
			fmt.Fprintf(&b, "  %s: %s; %s\n", bl.Volume, bl.Problem, bl.Resolve)
		}
	}
	b.WriteString("\nWhat holds each node's drain (instance-manager PodDisruptionBudgets, docs/troubleshooting-migration-family.md):\n")
	if err := scan.PrintDrain(&b, r.Drain); err != nil {
		return err
	}
	if len(r.Unchecked) > 0 {
		fmt.Fprintf(&b, "\nNot checked: %s\n", strings.Join(r.Unchecked, "; "))
	}

	b.WriteString("\nRecommendation:\n")
	for i, s := range r.Recommendation.Steps {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, s)
	}
	if r.Recommendation.GuardRBAC != "" {
		fmt.Fprintf(&b, "  The guard needs, %s.\n", r.Recommendation.GuardRBAC)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// workloadCell is "VirtualMachineInstance default/vm-1", the PVC when no
// pod is known, or "-".
func workloadCell(v MigratingVolume) string {
	var parts []string
	for _, w := range v.Workloads {
		name := w.Name
		if w.Namespace != "" {
			name = w.Namespace + "/" + w.Name
		}
		parts = append(parts, w.Kind+" "+name)
	}
	switch {
	case len(parts) > 0:
		return strings.Join(parts, ", ")
	case v.PVC != "":
		return "pvc " + v.PVC
	}
	return "-"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// SummaryLine is the one line on stderr after the table.
func (r *Report) SummaryLine() string {
	exposed := "exposure to longhorn#6642 unknown (the Longhorn release is unknown)"
	switch {
	case r.Summary.Exposed == nil:
	case *r.Summary.Exposed:
		exposed = "exposed to longhorn#6642"
	default:
		exposed = "not exposed to longhorn#6642"
	}
	return fmt.Sprintf("%s: %d volume(s) live-migrate during drains (%d already in a finding), %d blocker(s), %s",
		r.Verdict, r.Summary.Migrating, r.Summary.InFinding, r.Summary.Blockers, exposed)
}
