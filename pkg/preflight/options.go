package preflight

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fixwatch"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

// OutputFormats are the values of -o.
var OutputFormats = []string{"table", "json", "yaml"}

// Options is everything `preflight` needs, filled by flags and Complete,
// checked by Validate.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	// To is the upgrade target release ("" for none).
	To string
	// Window is the --for of the recommended upgrade guard.
	Window           time.Duration
	Output           string
	PendingThreshold time.Duration
	ChunkSize        int
	// Input reads a support bundle or YAML/JSON files instead of the
	// cluster, as scan does.
	readstate.Input

	target    *longhorn.Version
	namespace string
	client    *readstate.Client
}

// NewOptions returns defaults.
func NewOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *Options {
	return &Options{
		ConfigFlags:      cf,
		IOStreams:        streams,
		Window:           fixwatch.DefaultFor,
		Output:           "table",
		PendingThreshold: detect.DefaultPendingThreshold,
		ChunkSize:        readstate.DefaultPageSize,
	}
}

// Validate checks flag values before any request; it changes nothing.
func (o *Options) Validate() error {
	ok := false
	for _, f := range OutputFormats {
		ok = ok || f == o.Output
	}
	if !ok {
		return fmt.Errorf("unknown output format %q: use one of %s", o.Output, strings.Join(OutputFormats, ", "))
	}
	switch {
	case o.Window <= 0:
		return errors.New("--for must be positive")
	case o.PendingThreshold <= 0:
		return errors.New("--pending-threshold must be positive")
	case o.ChunkSize <= 0:
		return errors.New("--chunk-size must be positive")
	}
	return o.Input.Validate()
}

// Complete parses --to and resolves the namespace and the client (preflight
// takes no arguments: cobra has refused any).
func (o *Options) Complete([]string) error {
	if o.To != "" {
		v, err := longhorn.ParseVersion(o.To)
		if err != nil {
			return fmt.Errorf("--to: %w (for example --to v1.6.2)", err)
		}
		o.target = &v
	}
	o.namespace = cmdutil.Namespace(o.ConfigFlags)
	c, err := o.Input.Client(o.client, o.ConfigFlags)
	o.client = c
	return err
}

// Run reads, assesses and prints. The returned error carries the exit
// code: 1 when something blocks the upgrade, 2 when something could not be
// checked (the report is printed first).
func (o *Options) Run(ctx context.Context) error {
	in, err := o.read(ctx)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	// A target that cannot be checked still leaves what was read worth
	// printing: the report without the target, then exit 2.
	var targetErr error
	if o.target != nil {
		if targetErr = checkTarget(in.State.Version, *o.target); targetErr == nil {
			for _, w := range targetWarnings(in.State.Version, *o.target) {
				o.warnf("%s", w)
			}
			in.Target = o.target
		}
	}
	in.Window = o.Window
	r := assess(in)
	if err := Print(o.Out, r, o.Output); err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	if o.Output == "table" {
		fmt.Fprintln(o.ErrOut, r.SummaryLine())
	}
	if targetErr != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("%w; the report above is for the running release only", targetErr))
	}
	switch r.Verdict {
	case VerdictUnchecked:
		return cmdutil.WithCode(cmdutil.ExitNoCheck, errors.New("could not check "+strings.Join(r.Unchecked, "; ")))
	case VerdictAttention:
		return cmdutil.Silent(cmdutil.ExitNeedsAction)
	}
	return nil
}

func (o *Options) warnf(f string, a ...any) { cmdutil.Warnf(o.ErrOut)(f, a...) }

// read loads the state live or offline and classifies it as scan does.
func (o *Options) read(ctx context.Context) (input, error) {
	dopts := detect.Options{PendingThreshold: o.PendingThreshold}
	if !o.Offline() {
		lo := readstate.LoadOptions{Namespace: o.namespace, PageSize: o.ChunkSize, Warnf: o.warnf}
		st, err := readstate.Load(ctx, o.client, lo)
		if err != nil {
			return input{}, err
		}
		return input{State: st, Result: detect.Classify(st, dopts), Source: "cluster", Unchecked: orphanCheck(st, "")}, nil
	}
	off, err := o.Input.Load(ctx, o.In, o.ConfigFlags, readstate.OfflineOptions{Warnf: o.warnf})
	if err != nil {
		return input{}, err
	}
	st := off.State
	// What the input lacked leaves the whole check incomplete (exit 2).
	unchecked := append(append([]string(nil), off.Incomplete...), orphanCheck(st, off.OrphansUnreliable)...)
	dopts.SkipOrphans = off.OrphansUnreliable != ""
	if st.Namespace == "" {
		st.Namespace = o.namespace
	}
	res := detect.Classify(st, dopts)
	detect.AttachLogs(st, &res, scan.LogEvidence(off), dopts)
	return input{State: st, Result: res, Source: off.Source, Unchecked: unchecked}, nil
}

// orphanCheck names the orphan engine process check when it cannot run:
// those processes block drains, so a preflight without them is incomplete.
func orphanCheck(st *longhorn.State, unreliable string) []string {
	switch {
	case unreliable != "":
		return []string{"orphan engine processes (" + unreliable + ")"}
	case !st.InstanceManagersRead:
		return []string{"orphan engine processes (instance managers not read; " + docs.RBAC + ")"}
	}
	return nil
}
