package scan

import (
	"fmt"
	"io"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// A volume named on the command line with no finding gets a row of its
// own, as kubectl get NAME does; unnamed healthy volumes are only counted.
const (
	healthyFinding = "Healthy"
	healthyReason  = "at most one active engine and no migration, nothing to do"
)

// OutputFormats are the values of -o.
var OutputFormats = []string{"table", "wide", "json", "yaml", "name"}

// Print writes the report in format to out. Colour applies to table and
// wide only; width is the terminal's column count (0: no limit), which only
// the default table fits itself to.
func Print(out io.Writer, r *Report, format string, noHeaders bool, p cmdutil.Painter, width int) error {
	switch format {
	case "", "table":
		return printTable(out, r, noHeaders, p, width)
	case "wide":
		return printWide(out, r, noHeaders, p)
	case "json":
		return cmdutil.PrintJSON(out, r)
	case "yaml":
		return cmdutil.PrintYAML(out, r)
	case "name":
		seen := map[string]bool{}
		for _, v := range r.Healthy {
			if _, err := fmt.Fprintln(out, longhorn.Volumes.Qualified()+"/"+v); err != nil {
				return err
			}
		}
		for _, f := range r.Findings {
			n := longhorn.Volumes.Qualified() + "/" + f.Volume
			if f.Type == detect.TypeOrphanEngine || f.Type == detect.TypeOrphanEngineProcess {
				n = longhorn.Engines.Qualified() + "/" + strings.Join(f.Stale, ",")
			}
			if !seen[n] {
				seen[n] = true
				if _, err := fmt.Fprintln(out, n); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("unknown output format %q", format)
}

// printTable is the default view: one short row per finding that fits the
// terminal. Engines show as suffix@node (the VOLUME column names the
// volume), the reason is cut to what is left of the line, and when even
// that does not fit the PVC/VM and node names give way (docs/scan-report.md
// "Table"). -o wide and describe keep every detail.
func printTable(out io.Writer, r *Report, noHeaders bool, p cmdutil.Painter, width int) error {
	if len(r.Findings) == 0 && len(r.Healthy) == 0 {
		// Like kubectl's "No resources found": the summary on stderr says it.
		return nil
	}
	t := &table{}
	t.column("VOLUME", nil)
	cUser := t.column("PVC/VM", truncate)
	t.column("FINDING", nil)
	t.column("SEVERITY", nil)
	cKeep := t.column("KEEP", shrinkEngines)
	cStale := t.column("STALE", shrinkEngines)
	t.column("ACTION", nil)
	cWhy := t.column("REASON", truncate)
	// A terminal gets engines by suffix, to fit; a pipe or a file gets the
	// full names, which kubectl takes.
	full := width <= 0
	for i := range r.Findings {
		f := &r.Findings[i]
		keep := engineAt(f, f.Keep, full)
		stale := make([]string, len(f.Stale))
		for j, n := range f.Stale {
			stale[j] = engineAt(f, n, full)
		}
		t.row([]string{f.Volume, dash(usedBy(f.Evidence.Kubernetes)), string(f.Type), string(f.Severity),
			dash(keep), dash(strings.Join(stale, ",")), string(f.Action), shortReason(f, full)},
			[]func(string) string{nil, nil, nil, severityColor(p, f.Severity), nil, nil, actionColor(p, f.Action), p.Faint})
	}
	for _, v := range r.Healthy {
		t.row([]string{v, "-", healthyFinding, "-", "-", "-", string(detect.ActionNone), healthyReason},
			[]func(string) string{nil, nil, p.Green, nil, nil, nil, nil, p.Faint})
	}
	// What gives way first when the terminal is narrow: the reason (read it
	// in describe), then the PVC/VM down to a recognisable stub, then the
	// node names of KEEP and STALE, then the PVC/VM altogether.
	t.steps = []shrinkStep{
		{col: cWhy, min: 16, drop: true},
		{col: cUser, min: 12},
		{col: cKeep, min: engineMin(t.cols[cKeep].cells)},
		{col: cStale, min: engineMin(t.cols[cStale].cells)},
		{col: cUser, min: 8, drop: true},
	}
	return t.write(out, width, !noHeaders)
}

// printWide keeps every detail on one line per finding, like kubectl's
// -o wide: it is not cut to the terminal.
func printWide(out io.Writer, r *Report, noHeaders bool, p cmdutil.Painter) error {
	if len(r.Findings) == 0 && len(r.Healthy) == 0 {
		return nil
	}
	t := &table{}
	logs := strings.HasPrefix(r.Source, "bundle:") // log evidence exists only in bundles
	for _, h := range []string{"VOLUME", "PVC", "WORKLOAD", "FINDING", "SEVERITY", "KEEP", "STALE", "ACTION",
		"NODE", "CURRENT-NODE", "MIGRATION-NODE", "POD-NODES", "CSI-NODE", "ENGINES", "REPLICAS-ACTIVE"} {
		t.column(h, nil)
	}
	if logs {
		t.column("LOGS", nil)
	}
	t.column("WHY", nil)
	for i := range r.Findings {
		f := &r.Findings[i]
		ev := &f.Evidence
		pods, csi := workloadCells(ev.Workload)
		row := []string{f.Volume, dash(pvcOf(ev.Kubernetes)), dash(workloadOf(ev.Kubernetes)), string(f.Type), string(f.Severity),
			dash(f.Keep), dash(strings.Join(f.Stale, ",")), string(f.Action),
			dash(ev.NodeID), dash(ev.CurrentNodeID), dash(migrationNode(ev)), pods, csi,
			dash(engineList(ev)), replicaCount(ev)}
		paint := make([]func(string) string, len(row))
		paint[4] = severityColor(p, f.Severity)
		paint[7] = actionColor(p, f.Action)
		if ev.Workload != nil && (ev.Workload.PodsNotChecked != "" || ev.Workload.CSIAttachmentsNotChecked != "") {
			paint[11], paint[12] = p.Faint, p.Faint
		}
		if logs {
			row = append(row, logColumn(f.Evidence.Logs))
			paint = append(paint, nil)
		}
		t.row(append(row, f.Reason), append(paint, nil))
	}
	for _, v := range r.Healthy {
		row := []string{v}
		for len(row) < len(t.cols)-1 {
			row = append(row, "-")
		}
		row[3], row[7] = healthyFinding, string(detect.ActionNone)
		t.row(append(row, healthyReason), nil)
	}
	return t.write(out, 0, !noHeaders)
}

// notCheckedCell marks a wide cell whose objects were not read (no
// permission, not served, not in the bundle); describe and JSON say why.
const notCheckedCell = "not-checked"

// workloadCells are the POD-NODES cell, the nodes of the pods using the
// volume that have not finished, and the CSI-NODE cell, the nodes
// Longhorn's CSI attachments of the PV attach it to.
func workloadCells(w *detect.WorkloadPlacement) (pods, csi string) {
	if w == nil {
		return "-", "-"
	}
	return nodesCell(w.PodsNotChecked, w.PodNodes()), nodesCell(w.CSIAttachmentsNotChecked, w.CSINodes())
}

// nodesCell lists nodes, or says their objects were not read.
func nodesCell(notChecked string, nodes []string) string {
	if notChecked != "" {
		return notCheckedCell
	}
	return dash(strings.Join(nodes, ","))
}

// shortReason is the part of a finding's reason the table has room for:
// for a refused repair what failed, for a repair what it does; the whole
// reason is in -o wide, describe and JSON.
func shortReason(f *detect.Finding, full bool) string {
	why := f.Reason
	if f.Type == detect.TypeMultipleActiveEngines {
		if c := f.FirstFailed(); c != nil && c.Failure != "" {
			why = c.Failure
		} else if _, decision, ok := strings.Cut(f.Reason, `second active engine"; `); ok {
			// What comes before repeats what FINDING says.
			why = decision
		}
	}
	if full {
		return why
	}
	// Engines as the KEEP and STALE columns name them.
	return strings.ReplaceAll(why, f.Volume+"-e-", "e-")
}

// engineAt renders an engine of the finding as suffix@node
// ("e-1cd53c57@harvester-node-2").
func engineAt(f *detect.Finding, name string, full bool) string {
	if name == "" {
		return ""
	}
	short := name
	if !full {
		short = engineSuffix(f.Volume, name)
	}
	for _, e := range f.Evidence.Engines {
		if e.Name == name && e.NodeID != "" {
			return short + "@" + e.NodeID
		}
	}
	return short
}

// engineSuffix drops the volume name Longhorn puts in front of an engine's.
func engineSuffix(vol, name string) string {
	if s, ok := strings.CutPrefix(name, vol+"-"); ok && s != "" {
		return s
	}
	return name
}

// usedBy is the PVC/VM cell: the Harvester VM when a VM's pod uses the
// volume, else the PVC bound to it.
func usedBy(k *detect.KubernetesEvidence) string {
	switch {
	case k == nil:
		return ""
	case k.VM() != "":
		return "vm/" + k.VM()
	case k.PVCName != "":
		return "pvc/" + k.PVCName
	}
	return ""
}

func pvcOf(k *detect.KubernetesEvidence) string {
	if k == nil || k.PVCName == "" {
		return ""
	}
	if k.Namespace == "" {
		return k.PVCName
	}
	return k.Namespace + "/" + k.PVCName
}

// workloadOf lists the workloads (type/name) using the volume.
func workloadOf(k *detect.KubernetesEvidence) string {
	if k == nil {
		return ""
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range k.Workloads {
		s := w.WorkloadName
		if s == "" {
			s = "pod/" + w.PodName
		} else if w.WorkloadType != "" {
			s = w.WorkloadType + "/" + s
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}

func migrationNode(ev *detect.Evidence) string {
	if ev.MigrationNodeID != "" {
		return ev.MigrationNodeID
	}
	if ev.CurrentMigrationNodeID != "" {
		return "(" + ev.CurrentMigrationNodeID + ")"
	}
	return ""
}

// engineList renders "name@node(active,state)" for every engine.
func engineList(ev *detect.Evidence) string {
	parts := make([]string, 0, len(ev.Engines))
	for _, e := range ev.Engines {
		flags := "inactive"
		if e.Active {
			flags = "active"
		}
		if e.DeletionTimestamp != nil {
			flags += ",deleting"
		}
		parts = append(parts, fmt.Sprintf("%s@%s(%s,%s)", e.Name, dash(e.NodeID), flags, dash(e.State)))
	}
	return strings.Join(parts, " ")
}

func replicaCount(ev *detect.Evidence) string {
	n := 0
	for _, r := range ev.Replicas {
		if r.Active {
			n++
		}
	}
	return fmt.Sprintf("%d/%d", n, len(ev.Replicas))
}

func severityColor(p cmdutil.Painter, s detect.Severity) func(string) string {
	switch s {
	case detect.SeverityCritical:
		return p.Red
	case detect.SeverityWarning:
		return p.Yellow
	}
	return p.Green
}

func actionColor(p cmdutil.Painter, a detect.Action) func(string) string {
	if a.Writes() {
		return p.Bold
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Summary is the one-line verdict printed to stderr after a table.
func (r *Report) SummaryLine() string {
	s := r.Summary
	if s.Findings == 0 {
		return fmt.Sprintf("No engine problems found: %d volume(s) checked in namespace %s, Longhorn %s.", s.Volumes, r.Namespace, r.LonghornVersion)
	}
	return fmt.Sprintf("%d volume(s) checked in namespace %s, Longhorn %s: %d healthy, %d finding(s), %d need attention, %d repairable by fix, %d in flight.",
		s.Volumes, r.Namespace, r.LonghornVersion, s.Healthy, s.Findings, s.NeedAttention, s.Repairable, s.InFlight)
}
