package cmdutil

import (
	"fmt"
	"testing"
)

// Every command parses --dry-run here, with kubectl's values and its
// deprecated booleans.
func TestParseDryRun(t *testing.T) {
	tests := []struct {
		in      string
		want    DryRun
		warn    bool
		wantErr bool
		suffix  string
	}{
		{"none", DryRunNone, false, false, ""},
		{"", DryRunNone, false, false, ""},
		{"client", DryRunClient, false, false, " (dry run)"},
		{"server", DryRunServer, false, false, " (server dry run)"},
		{DryRunNoOptValue, DryRunClient, true, false, " (dry run)"},
		{"true", DryRunClient, true, false, " (dry run)"},
		{"false", DryRunNone, true, false, ""},
		{"all", DryRunNone, false, true, ""},
	}
	for _, tt := range tests {
		got, warn, err := ParseDryRun(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want || (warn != "") != tt.warn || got.Suffix() != tt.suffix {
			t.Errorf("ParseDryRun(%q) = %v, %q, %v; want %v, warning %t, error %t, suffix %q", tt.in, got, warn, err, tt.want, tt.warn, tt.wantErr, tt.suffix)
		}
	}
}

// TestDryRunSent: only a server dry run sends dryRun=All; none sends the
// write for real and client sends nothing (its caller never reaches a
// request).
func TestDryRunSent(t *testing.T) {
	for d, want := range map[DryRun]string{DryRunNone: "[]", DryRunClient: "[]", DryRunServer: "[All]"} {
		if got := fmt.Sprint(d.Sent()); got != want {
			t.Errorf("%s.Sent() = %s, want %s", d, got, want)
		}
	}
}
