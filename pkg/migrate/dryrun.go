package migrate

import "fmt"

// DryRun is kubectl's --dry-run strategy.
type DryRun int

const (
	DryRunNone DryRun = iota
	// DryRunClient prints the change without sending it.
	DryRunClient
	// DryRunServer sends the change with dryRun=All: the API server (and
	// Longhorn's admission webhooks) check it, nothing is persisted.
	DryRunServer
)

// DryRunNoOptValue is what a bare --dry-run parses to, as in kubectl.
const DryRunNoOptValue = "unchanged"

// ParseDryRun reads a --dry-run value like kubectl does, including the
// deprecated booleans; warning is non-empty for those.
func ParseDryRun(v string) (d DryRun, warning string, err error) {
	switch v {
	case "", "none":
		return DryRunNone, "", nil
	case "client":
		return DryRunClient, "", nil
	case "server":
		return DryRunServer, "", nil
	case DryRunNoOptValue, "true":
		return DryRunClient, "--dry-run is deprecated and can be replaced with --dry-run=client.", nil
	case "false":
		return DryRunNone, "--dry-run=false is deprecated (boolean value) and can be replaced with --dry-run=none.", nil
	}
	return DryRunNone, "", fmt.Errorf(`invalid --dry-run value %q: must be "none", "server", or "client"`, v)
}

// Suffix is what kubectl appends to a change line.
func (d DryRun) Suffix() string {
	switch d {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}
