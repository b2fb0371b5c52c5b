package fix

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// isTerminal tells whether in is an interactive terminal. fix reads stdin
// only then: a pipe or /dev/null never answers a question, and a script
// must say --yes.
func isTerminal(in io.Reader) bool {
	if testHooks.Terminal != nil {
		return testHooks.Terminal(in)
	}
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// confirm asks question on errOut and reads one line from in; only "y" or
// "yes" (any case) agree. End of input is a no.
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

// testHooks let tests of this package reach into a run of the real command
// tree. They are nil in production.
var testHooks struct {
	// AfterPlan runs after the plan is printed and confirmed, before the
	// first re-check.
	AfterPlan func()
	// BeforeWrite runs right before each write, after the re-check and the
	// backup.
	BeforeWrite func(engine string)
	// AfterWrite runs right after each successful write.
	AfterWrite func(engine string)
	// Terminal overrides the terminal test of stdin.
	Terminal func(io.Reader) bool
	// PollInterval overrides the verification poll interval.
	PollInterval time.Duration
}
