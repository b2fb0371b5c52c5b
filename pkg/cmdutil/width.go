package cmdutil

import (
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// TerminalWidth is the column count of out when it is a terminal, 0 (no
// limit) otherwise: a pipe or a file gets whole lines, as kubectl's do.
func TerminalWidth(out io.Writer) int {
	f, ok := out.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return 0
	}
	return w
}

// Duration prints a duration for a person: whole seconds from a second
// up ("1m0s", never "1m0.001s"), milliseconds below.
func Duration(d time.Duration) string {
	if d >= time.Second || d <= -time.Second {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}
