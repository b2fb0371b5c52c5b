package cmd_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// An error or a warning can carry what came from elsewhere (a file name, a
// bundle, an API server's message): the "warning: ..." and "error: ..."
// lines print it escaped, each on one line.
func TestErrorAndWarningLinesEscaped(t *testing.T) {
	bad := t.TempDir() + "/dump\x1b]0;pwned\x07\x1b[2J"
	for _, args := range [][]string{
		{"scan", "-f", bad + ".yaml"},
		{"scan", "--bundle", bad + ".zip"},
		{"preflight", "--bundle", bad + ".zip"},
	} {
		var out, errOut bytes.Buffer
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		code := cmd.Execute(context.Background(), streams, args)
		lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if code != cmdutil.ExitNoCheck || !strings.HasPrefix(lines[len(lines)-1], "error: ") {
			t.Errorf("%s: exit %d, stderr %q", args[:2], code, errOut.String())
		}
		for _, l := range lines {
			if !safetext.Printable(l) {
				t.Errorf("%s: a raw line on stderr: %q", args[:2], l)
			}
		}
		if !strings.Contains(errOut.String(), `\u001b]0;pwned`) {
			t.Errorf("%s: the name is not shown escaped: %q", args[:2], errOut.String())
		}
	}
}
