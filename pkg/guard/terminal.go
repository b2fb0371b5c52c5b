package guard

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// isTerminal tells whether in is an interactive terminal. The guard asks
// once, at start, only then; a Job or a script must say --yes.
func isTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// confirm asks question on errOut and reads one line; only "y" or "yes"
// (any case) agree, end of input is a no.
func confirm(in io.Reader, errOut io.Writer, question string) bool {
	fmt.Fprintf(errOut, "%s [y/N]: ", question)
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(errOut)
		return false
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}
