// Package scan implements `kubectl longhorn-engines scan`: read Longhorn's
// objects, classify every volume with pkg/detect and print a report.
package scan

import (
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// ReportKind is the kind of scan's report (docs/scan-report.md documents
// the schema; cmdutil.ReportAPIVersion its version).
const ReportKind = "ScanReport"

// Report is what `scan -o json|yaml` prints.
type Report struct {
	cmdutil.ReportMeta
	Namespace       string           `json:"namespace"`
	Source          string           `json:"source"`
	LonghornVersion string           `json:"longhornVersion"`
	VersionClass    string           `json:"versionClass"`
	Summary         Summary          `json:"summary"`
	Findings        []detect.Finding `json:"findings"`
	// Healthy names the volumes named on the command line that have no
	// finding: a named volume is always in the report.
	Healthy []string `json:"healthy,omitempty"`
	// Incomplete lists what an offline input lacked (a damaged zip, a
	// missing or cut file): the findings cover only what was read, and
	// scan exits 2.
	Incomplete []string `json:"incomplete,omitempty"`
}

// Summary counts what the scan saw.
type Summary struct {
	Volumes        int `json:"volumes"`
	Healthy        int `json:"healthy"`
	Findings       int `json:"findings"`
	NeedAttention  int `json:"needAttention"`
	Repairable     int `json:"repairable"`
	InFlight       int `json:"inFlight"`
	OrphanFindings int `json:"orphans"`
}

// NewReport wraps a detection result.
func NewReport(st *longhorn.State, res detect.Result, source string) *Report {
	r := &Report{
		ReportMeta:      cmdutil.NewReportMeta(ReportKind),
		Namespace:       st.Namespace,
		Source:          source,
		LonghornVersion: st.Version.String(),
		VersionClass:    string(st.Version.Class()),
		Findings:        res.Findings,
	}
	if r.Findings == nil {
		r.Findings = []detect.Finding{}
	}
	r.Summary = Summary{Volumes: res.Volumes, Healthy: res.Healthy, Findings: len(res.Findings)}
	for i := range res.Findings {
		f := &res.Findings[i]
		if f.Severity.NeedsAttention() {
			r.Summary.NeedAttention++
		}
		switch f.Type {
		case detect.TypeMigrationInFlight, detect.TypeMigrationFinishing, detect.TypePendingCleanup:
			if !f.Severity.NeedsAttention() {
				r.Summary.InFlight++
			}
		case detect.TypeOrphanEngine, detect.TypeOrphanEngineProcess:
			r.Summary.OrphanFindings++
		}
		if f.Action.Writes() {
			r.Summary.Repairable++
		}
	}
	return r
}

// NeedsAttention decides scan's exit code.
func (r *Report) NeedsAttention() bool { return r.Summary.NeedAttention > 0 }
