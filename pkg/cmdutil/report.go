package cmdutil

// ReportAPIVersion is the apiVersion of every report the plugin prints with
// -o json|yaml (scan's, the drain view's, preflight's, migrate status's):
// one schema group, as a Kubernetes API group versions its kinds together.
// Bump it on an incompatible change of any of them (docs/scan-report.md,
// docs/preflight.md).
const ReportAPIVersion = "longhorn-engines/v1alpha1"

// ReportMeta heads every printed report, as TypeMeta heads a Kubernetes
// object. Embedded first, untagged, its fields print first.
type ReportMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// NewReportMeta is the head of a report of kind.
func NewReportMeta(kind string) ReportMeta {
	return ReportMeta{APIVersion: ReportAPIVersion, Kind: kind}
}
