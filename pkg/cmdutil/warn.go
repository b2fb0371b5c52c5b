package cmdutil

import (
	"fmt"
	"io"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// Warnf prints "warning: ..." lines on w, the one shape of a warning of
// every command; what the arguments carry of a cluster, a bundle or a file
// name is escaped.
func Warnf(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintln(w, "warning: "+safetext.Lines(fmt.Sprintf(format, args...)))
	}
}
