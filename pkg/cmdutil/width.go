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
	fd, ok := terminalFd(out)
	if !ok {
		return 0
	}
	w, _, err := term.GetSize(fd)
	if err != nil || w <= 0 {
		return 0
	}
	return w
}

// terminalFd is the file descriptor of a stream that is a terminal. A
// character device is not enough: /dev/null is one, and cron, a container
// or `ssh host cmd </dev/null` would be asked and answer no.
func terminalFd(stream any) (int, bool) {
	f, ok := stream.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	return int(f.Fd()), true
}

// Duration prints a duration for a person: whole seconds from a second
// up ("1m0s", never "1m0.001s"), milliseconds below.
func Duration(d time.Duration) string {
	if d >= time.Second || d <= -time.Second {
		return d.Round(time.Second).String()
	}
	return d.Round(time.Millisecond).String()
}
