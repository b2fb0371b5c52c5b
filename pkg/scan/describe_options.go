package scan

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// DescribeOptions is everything `describe` needs: what scan reads (the
// cluster, --bundle or -f), printed as a block per named volume instead of
// the table. Cobra has checked that at least one volume is named.
type DescribeOptions struct {
	ReadOptions
}

// NewDescribeOptions returns defaults.
func NewDescribeOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *DescribeOptions {
	return &DescribeOptions{ReadOptions: newReadOptions(cf, streams)}
}

// Validate checks flag values before any request.
func (o *DescribeOptions) Validate() error {
	if err := o.Input.Validate(); err != nil {
		return err
	}
	return o.validateRead()
}

// Run reads and classifies as scan does, then prints each named volume's
// block. The returned error carries scan's exit code: 1 when a volume
// needs attention, 2 when it could not be checked.
func (o *DescribeOptions) Run(ctx context.Context) error {
	st, res, source, incomplete, err := o.read(ctx)
	if err != nil {
		return err
	}
	p := cmdutil.NewPainter(cmdutil.UseColor(o.Color, o.Out))
	if err := o.describeAll(ctx, st, res, p); err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	r := NewReport(st, res, source)
	if err := incompleteError(r, incomplete); err != nil {
		return err
	}
	return exitForReport(r)
}

// describeAll prints describe's blocks and, when reading a cluster, each
// volume's Events after its block, as kubectl describe does: those of
// Longhorn's controllers and of this plugin (fix and the guard).
func (o *DescribeOptions) describeAll(ctx context.Context, st *longhorn.State, res detect.Result, p cmdutil.Painter) error {
	if o.Offline() || o.client == nil {
		return Describe(o.Out, st, res, o.Volumes, p, cmdutil.TerminalWidth(o.Out))
	}
	for i, name := range o.Volumes {
		if i > 0 {
			fmt.Fprintln(o.Out)
		}
		if err := Describe(o.Out, st, res, []string{name}, p, cmdutil.TerminalWidth(o.Out)); err != nil {
			return err
		}
		if err := o.printEvents(ctx, o.Out, st, name); err != nil {
			return err
		}
	}
	return nil
}

// printEvents writes the Events: section of one volume. Events are not part
// of the check: when they cannot be read the section says so and the exit
// code does not change.
func (o *DescribeOptions) printEvents(ctx context.Context, w io.Writer, st *longhorn.State, name string) error {
	v := volevents.Volume{Namespace: st.Namespace, Name: name}
	for _, x := range st.Volumes {
		if x.Name == name {
			v.UID = x.UID
		}
	}
	evs, err := volevents.List(ctx, o.client.Config, v)
	if apierrors.IsNotFound(err) {
		return nil // the server serves no Events API (a bare test server)
	}
	if err != nil {
		_, err = fmt.Fprintf(w, "Events:  <not read: %s>\n", safetext.Escape(cmdutil.Explain(err, "list", "events", st.Namespace).Error()))
		return err
	}
	return volevents.Print(w, evs, time.Now())
}
