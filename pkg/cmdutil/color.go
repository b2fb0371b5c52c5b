package cmdutil

import (
	"fmt"
	"io"

	"github.com/fatih/color"
	"k8s.io/cli-runtime/pkg/printers"
)

// ColorModes are the values of --color.
var ColorModes = []string{"auto", "always", "never"}

// ValidateColor checks a --color value.
func ValidateColor(mode string) error {
	for _, m := range ColorModes {
		if m == mode {
			return nil
		}
	}
	return fmt.Errorf("--color must be one of auto, always, never (got %q)", mode)
}

// UseColor decides once per command: never and always are explicit; auto
// colours only a terminal and honours NO_COLOR and TERM=dumb.
func UseColor(mode string, out io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	return printers.AllowsColorOutput(out)
}

// Painter colours text when enabled and is the identity otherwise.
type Painter struct{ enabled bool }

// NewPainter returns a Painter that colours when enabled is true.
func NewPainter(enabled bool) Painter { return Painter{enabled: enabled} }

func (p Painter) paint(s string, attrs ...color.Attribute) string {
	if !p.enabled || s == "" {
		return s
	}
	c := color.New(attrs...)
	c.EnableColor()
	return c.Sprint(s)
}

func (p Painter) Red(s string) string    { return p.paint(s, color.FgRed, color.Bold) }
func (p Painter) Yellow(s string) string { return p.paint(s, color.FgYellow) }
func (p Painter) Green(s string) string  { return p.paint(s, color.FgGreen) }
func (p Painter) Cyan(s string) string   { return p.paint(s, color.FgCyan) }
func (p Painter) Bold(s string) string   { return p.paint(s, color.Bold) }
func (p Painter) Faint(s string) string  { return p.paint(s, color.Faint) }
