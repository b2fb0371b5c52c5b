package cmdutil

import (
	"io"
	"os"

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
