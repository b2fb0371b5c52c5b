package scan_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

func realReport(t *testing.T, version string) *scan.Report {
	st := realState(t, version)
	return scan.NewReport(st, detect.Classify(st, detect.Options{}), "cluster")
}

// The default table fits the terminal with real names, keeps the columns
// that identify a finding whole, and cuts only what -o wide and describe
// show in full.
func TestTableFitsTheTerminal(t *testing.T) {
	r := realReport(t, "v1.4.3")
	for _, width := range []int{80, 120, 200} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			var b bytes.Buffer
			if err := scan.Print(&b, r, "table", false, cmdutil.NewPainter(false), width); err != nil {
				t.Fatal(err)
			}
			golden(t, fmt.Sprintf("table-real-%d.golden", width), b.String())
			lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
			if len(lines) != len(r.Findings)+1 {
				t.Fatalf("%d lines for %d findings: a row wrapped or split", len(lines), len(r.Findings))
			}
			for _, l := range lines {
				// At 80 columns the columns that are never cut (volume,
				// finding, severity, engine suffixes, action) are wider
				// than the terminal; everything else is gone.
				if n := utf8.RuneCountInString(l); n > width && width >= 120 {
					t.Errorf("line of %d columns in a %d-column terminal: %q", n, width, l)
				}
			}
			for _, f := range r.Findings {
				if !strings.Contains(b.String(), f.Volume) {
					t.Errorf("volume %s is cut", f.Volume)
				}
			}
			if !strings.Contains(lines[0], "KEEP") || !strings.Contains(b.String(), "e-") {
				t.Errorf("no KEEP column: %s", lines[0])
			}
		})
	}
	// 120 columns cannot hold two 40-rune volume names' worth of engine
	// nodes and a PVC: the nodes give way before the PVC/VM disappears.
	t.Run("120 keeps PVC/VM and engine suffixes", func(t *testing.T) {
		var b bytes.Buffer
		if err := scan.Print(&b, r, "table", false, cmdutil.NewPainter(false), 120); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"PVC/VM", "vm/vm-", "e-12802577", "e-0e1eda82"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("missing %q at 120 columns:\n%s", want, b.String())
			}
		}
	})
	t.Run("pipe is never cut", func(t *testing.T) {
		var b bytes.Buffer
		if err := scan.Print(&b, r, "table", true, cmdutil.NewPainter(false), 0); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "spec.nodeID is empty: Longhorn does not process this volume's engines (longhorn#4827)") {
			t.Errorf("the failure sentence is cut without a terminal:\n%s", b.String())
		}
		if strings.Contains(b.String(), "VOLUME") || strings.Contains(b.String(), "…") {
			t.Errorf("--no-headers printed a header or cut a cell:\n%s", b.String())
		}
	})
}

// Colour carries meaning and never moves a column: stripped of its escape
// codes the coloured table is the plain one.
func TestTableColourMeaning(t *testing.T) {
	r := realReport(t, "v1.4.3")
	var plain, coloured bytes.Buffer
	if err := scan.Print(&plain, r, "table", false, cmdutil.NewPainter(false), 200); err != nil {
		t.Fatal(err)
	}
	if err := scan.Print(&coloured, r, "table", false, cmdutil.NewPainter(true), 200); err != nil {
		t.Fatal(err)
	}
	stripped := regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(coloured.String(), "")
	if stripped != plain.String() {
		t.Errorf("colour moved the columns:\n%s\nvs\n%s", stripped, plain.String())
	}
	for what, re := range map[string]string{
		"critical red":  `\x1b\[31;1mcritical\x1b\[[0-9;]*m`,
		"info green":    `\x1b\[32minfo\x1b\[[0-9;]*m`,
		"reason dimmed": `\x1b\[2m[^\x1b]+\x1b\[[0-9;]*m\n`,
	} {
		if !regexp.MustCompile(re).MatchString(coloured.String()) {
			t.Errorf("%s: no match for %q in %q", what, re, coloured.String())
		}
	}
}
