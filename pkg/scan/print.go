package scan

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// OutputFormats are the values of -o.
var OutputFormats = []string{"table", "wide", "json", "yaml", "name"}

// Print writes the report in format to out. Colour applies to table and wide only.
func Print(out io.Writer, r *Report, format string, noHeaders bool, p cmdutil.Painter) error {
	switch format {
	case "", "table", "wide":
		return printTable(out, r, format == "wide", noHeaders, p)
	case "json":
		b, err := json.MarshalIndent(r, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "%s\n", b)
		return err
	case "yaml":
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		y, err := yaml.JSONToYAML(b)
		if err != nil {
			return err
		}
		_, err = out.Write(y)
		return err
	case "name":
		seen := map[string]bool{}
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

func printTable(out io.Writer, r *Report, wide, noHeaders bool, p cmdutil.Painter) error {
	if len(r.Findings) == 0 {
		// Like kubectl's "No resources found": the summary on stderr says it.
		return nil
	}
	t := &table{}
	logs := wide && strings.HasPrefix(r.Source, "bundle:") // log evidence exists only in bundles
	if !noHeaders {
		h := []string{"VOLUME", "FINDING", "SEVERITY", "KEEP", "STALE", "ACTION"}
		if wide {
			h = append(h, "NODE", "CURRENT-NODE", "MIGRATION-NODE", "ENGINES", "REPLICAS-ACTIVE")
		}
		if logs {
			h = append(h, "LOGS")
		}
		t.add(nil, append(h, "WHY")...)
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		row := []string{f.Volume, string(f.Type), string(f.Severity), dash(f.Keep), dash(strings.Join(f.Stale, ",")), string(f.Action)}
		paint := make([]func(string) string, len(row))
		paint[2] = severityColor(p, f.Severity)
		paint[5] = actionColor(p, f.Action)
		if wide {
			ev := &f.Evidence
			row = append(row, dash(ev.NodeID), dash(ev.CurrentNodeID), dash(migrationNode(ev)), dash(engineList(ev)), replicaCount(ev))
			paint = append(paint, nil, nil, nil, nil, nil)
		}
		if logs {
			row = append(row, logColumn(f.Evidence.Logs))
			paint = append(paint, nil)
		}
		why := f.Reason
		if f.Age != nil && f.Type == detect.TypePendingCleanup {
			why = "(" + f.Age.Round(1e9).String() + ") " + why
		}
		t.add(append(paint, nil), append(row, why)...)
	}
	return t.write(out)
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
	return p.Cyan
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
	return fmt.Sprintf("%d volume(s) checked in namespace %s, Longhorn %s: %d healthy, %d finding(s), %d need attention, %d repairable by `fix`, %d in flight.",
		s.Volumes, r.Namespace, r.LonghornVersion, s.Healthy, s.Findings, s.NeedAttention, s.Repairable, s.InFlight)
}
