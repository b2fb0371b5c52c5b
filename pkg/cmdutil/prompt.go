package cmdutil

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// IsTerminal tells whether in is an interactive terminal. Commands read
// stdin only then: a pipe or /dev/null never answers a question, and a
// script or a Job must say --yes.
func IsTerminal(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Confirm asks question on errOut and reads one line from in; only "y" or
// "yes" (any case) agree. End of input is a no.
func Confirm(in io.Reader, errOut io.Writer, question string) bool {
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
