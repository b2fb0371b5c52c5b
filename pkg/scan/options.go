package scan

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// ReadOptions is the read side scan and describe share: where the state
// comes from (the cluster, --bundle or -f), which volumes, and how it is
// classified. Each command's Options embeds it and adds its own output.
type ReadOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	Volumes          []string
	Selector         string
	Color            string
	PendingThreshold time.Duration
	ChunkSize        int
	// Input reads a support bundle or YAML/JSON files instead of the
	// cluster (offline.go).
	readstate.Input

	namespace string
	client    *readstate.Client
}

// addFlags adds the flags of the read side that scan and describe share.
func (o *ReadOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Color, "color", o.Color, "Colour the output: auto, always or never (auto honours NO_COLOR and TERM=dumb)")
	f.DurationVar(&o.PendingThreshold, "pending-threshold", o.PendingThreshold, "Report an active engine waiting for its finalizer once it has waited this long")
	o.Input.AddFlags(f)
}

func newReadOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) ReadOptions {
	return ReadOptions{
		ConfigFlags:      cf,
		IOStreams:        streams,
		Color:            "auto",
		PendingThreshold: detect.DefaultPendingThreshold,
		ChunkSize:        readstate.DefaultPageSize,
	}
}

// Complete resolves the namespace and the client.
func (o *ReadOptions) Complete(args []string) error {
	o.Volumes = args
	o.namespace = cmdutil.Namespace(o.ConfigFlags)
	c, err := o.Input.Client(o.client, o.ConfigFlags)
	o.client = c
	return err
}

// validateRead checks the read side's flag values, after the input flags
// (Input.Validate) and the command's own. Parsed here, as kubectl does, so
// a typo is a usage error and never reaches the server.
func (o *ReadOptions) validateRead() error {
	if o.Selector != "" {
		if _, err := labels.Parse(o.Selector); err != nil {
			return fmt.Errorf("invalid label selector %q: %w", o.Selector, err)
		}
	}
	if o.ChunkSize <= 0 {
		return fmt.Errorf("--chunk-size must be positive")
	}
	if o.PendingThreshold <= 0 {
		return fmt.Errorf("--pending-threshold must be positive")
	}
	return cmdutil.ValidateColor(o.Color)
}

// read loads the state from the cluster or the offline input and
// classifies it. source names where it came from; with incomplete set the
// read covered only part of the input. Its error carries exit code 2.
func (o *ReadOptions) read(ctx context.Context) (st *longhorn.State, res detect.Result, source string, incomplete []string, err error) {
	if o.Offline() {
		return o.readOffline(ctx)
	}
	lo := readstate.LoadOptions{
		Namespace: o.namespace, Volumes: o.Volumes, Selector: o.Selector, PageSize: o.ChunkSize,
		Warnf: cmdutil.Warnf(o.ErrOut),
	}
	st, err = readstate.Load(ctx, o.client, lo)
	if err != nil {
		return nil, res, "", nil, cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	res = detect.Classify(st, detect.Options{PendingThreshold: o.PendingThreshold, SkipOrphans: lo.Partial()})
	return st, res, "cluster", nil, nil
}

// Client exposes the client for completion helpers.
func (o *ReadOptions) Client() *readstate.Client { return o.client }

// Options is everything `scan` needs, filled by flags and Complete, checked
// by Validate.
type Options struct {
	ReadOptions

	Output    string
	NoHeaders bool
	// Node shows what holds that node's drain instead of the table
	// (drain.go).
	Node string
}

// NewOptions returns defaults.
func NewOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *Options {
	return &Options{ReadOptions: newReadOptions(cf, streams), Output: "table"}
}

// Validate checks flag values before any request.
func (o *Options) Validate() error {
	if err := ValidateOutput(o.Output); err != nil {
		return err
	}
	if err := o.Input.Validate(); err != nil {
		return err
	}
	if o.Node != "" && (len(o.Volumes) > 0 || o.Selector != "" || (o.Output != "table" && o.Output != "json")) {
		return fmt.Errorf("--node takes no volume, no -l, and -o table or json only")
	}
	if o.NoHeaders && o.Output != "table" && o.Output != "wide" {
		return fmt.Errorf("--no-headers applies to -o table and wide only, not -o %s", o.Output)
	}
	return o.validateRead()
}

// ValidateOutput checks an -o value.
func ValidateOutput(format string) error {
	for _, f := range OutputFormats {
		if f == format {
			return nil
		}
	}
	return fmt.Errorf("unknown output format %q: use one of table, wide, json, yaml, name", format)
}

// Run scans and prints. The returned error carries the exit code: 1 when a
// finding needs attention, 2 when the cluster could not be checked.
func (o *Options) Run(ctx context.Context) error {
	st, res, source, incomplete, err := o.read(ctx)
	if err != nil {
		return err
	}
	return o.print(st, res, source, incomplete)
}

// print prints the report. With incomplete set, the check covered only part
// of the input: the report says so and the exit code is 2 whatever was found.
func (o *Options) print(st *longhorn.State, res detect.Result, source string, incomplete []string) error {
	if o.Node != "" {
		if err := incompleteError(NewReport(st, res, source), incomplete); err != nil {
			return err
		}
		return o.printNode(st, res)
	}
	r := NewReport(st, res, source)
	r.Incomplete = incomplete
	r.Healthy = namedHealthy(st, res, o.Volumes)
	structured := o.Output == "json" || o.Output == "yaml" || o.Output == "name"
	p := cmdutil.NewPainter(!structured && cmdutil.UseColor(o.Color, o.Out))
	if err := Print(o.Out, r, o.Output, o.NoHeaders, p, cmdutil.TerminalWidth(o.Out)); err != nil {
		return cmdutil.WithCode(cmdutil.ExitNoCheck, err)
	}
	if err := incompleteError(r, incomplete); err != nil {
		return err
	}
	if !structured {
		line := r.SummaryLine()
		if r.Summary.Findings == 0 {
			// Healthy is green, on stderr's own terminal test.
			line = cmdutil.NewPainter(cmdutil.UseColor(o.Color, o.ErrOut)).Green(line)
		}
		fmt.Fprintln(o.ErrOut, line)
	}
	return exitForReport(r)
}

// exitForReport is exit 1 when a finding needs attention, else nil.
func exitForReport(r *Report) error {
	if r.NeedsAttention() {
		return cmdutil.Silent(cmdutil.ExitNeedsAction)
	}
	return nil
}

// incompleteError is exit 2 naming what could not be read, or nil when the
// check covered all of its input.
func incompleteError(r *Report, incomplete []string) error {
	if len(incomplete) == 0 {
		return nil
	}
	return cmdutil.WithCode(cmdutil.ExitNoCheck, fmt.Errorf("the check is incomplete, the report covers only what could be read (%d volume(s)): %s",
		r.Summary.Volumes, strings.Join(incomplete, "; ")))
}

// namedHealthy is the named volumes that exist and have no finding, in the
// order named.
func namedHealthy(st *longhorn.State, res detect.Result, named []string) []string {
	exists, found, seen := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range st.Volumes {
		exists[st.Volumes[i].Name] = true
	}
	for i := range res.Findings {
		found[res.Findings[i].Volume] = true
	}
	var out []string
	for _, v := range named {
		if exists[v] && !found[v] && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
