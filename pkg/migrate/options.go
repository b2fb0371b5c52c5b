// Package migrate implements `kubectl longhorn-engines migrate`: drive a
// Longhorn live migration one step at a time — pre-check, start, wait for the
// migration engine, confirm or roll back, verify — with the write of each step
// decided from a fresh read and pinned to its resourceVersion.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// Mode is the subcommand.
type Mode string

const (
	// ModeMigrate runs the whole sequence (`migrate VOLUME --to NODE`).
	ModeMigrate Mode = "migrate"
	// ModeConfirm finishes a migration in flight on its target node.
	ModeConfirm Mode = "confirm"
	// ModeRollback abandons a migration in flight.
	ModeRollback Mode = "rollback"
	// ModeStatus shows where a migration stands (read-only).
	ModeStatus Mode = "status"
)

// Defaults.
const (
	DefaultTimeout      = 10 * time.Minute
	DefaultPollInterval = time.Second
	// minRecoveryTimeout bounds a rollback after a failure and the
	// verification after a confirm when --timeout is shorter: they must not
	// be cut short because the wait that failed was.
	minRecoveryTimeout = 2 * time.Minute
)

// Options is everything migrate needs, filled by flags and Complete,
// checked by Validate.
type Options struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	Mode    Mode
	Volume  string
	To      string
	Confirm bool
	Timeout time.Duration
	Yes     bool
	DryRun  string
	Force   bool
	Fix     bool
	// BackupDir receives the objects before --fix changes them.
	BackupDir string
	// FieldManager names migrate in managedFields (--field-manager).
	FieldManager string
	// Events records Kubernetes Events of a --fix repair (--events).
	Events bool
	Output string // status only
	// PollInterval is how often a wait re-reads the volume.
	PollInterval time.Duration
	// Terminal replaces the terminal test of In at the prompt (tests); nil
	// means cmdutil.IsTerminal.
	Terminal func(io.Reader) bool

	args      []string
	namespace string
	dryRun    cmdutil.DryRun
	client    *readstate.Client
}

// NewOptions returns defaults.
func NewOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, mode Mode) *Options {
	return &Options{
		ConfigFlags:  cf,
		IOStreams:    streams,
		Mode:         mode,
		Timeout:      DefaultTimeout,
		DryRun:       "none",
		Output:       "text",
		PollInterval: DefaultPollInterval,
		FieldManager: cmdutil.DefaultFieldManager,
		Events:       true,
	}
}

// StatusOutputs are the values of `migrate status -o`.
var StatusOutputs = []string{"text", "json", "yaml"}

// Complete takes the volume, parses --dry-run and builds the client.
func (o *Options) Complete(args []string) error {
	o.args = args
	if len(args) == 1 {
		o.Volume = args[0]
	}
	d, err := cmdutil.DryRunFlag(o.DryRun, o.ErrOut)
	if err != nil {
		return err
	}
	o.dryRun = d
	o.namespace = cmdutil.Namespace(o.ConfigFlags)
	c, err := readstate.Ensure(o.client, o.ConfigFlags)
	o.client = c
	return err
}

// Validate checks flag values and arguments before any request; it changes
// nothing.
func (o *Options) Validate() error {
	if o.Timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	if err := cmdutil.ValidateFieldManager(o.FieldManager); err != nil {
		return err
	}
	if o.PollInterval <= 0 {
		return errors.New("--poll-interval must be positive")
	}
	switch o.Mode {
	case ModeMigrate:
		if o.To == "" {
			return errors.New("--to NODE is required: the Longhorn node to migrate the volume to")
		}
	case ModeStatus:
		ok := false
		for _, f := range StatusOutputs {
			ok = ok || f == o.Output
		}
		if !ok {
			return fmt.Errorf("unknown output format %q: use text, json or yaml", o.Output)
		}
	}
	if o.Fix && o.dryRun != cmdutil.DryRunNone {
		return errors.New("--fix cannot be combined with --dry-run")
	}
	if len(o.args) != 1 {
		return fmt.Errorf("exactly one VOLUME is required (got %d arguments)", len(o.args))
	}
	return nil
}

// Run executes the mode. The returned error carries the exit code (see
// cmdutil/exit.go).
func (o *Options) Run(ctx context.Context) error {
	s, err := newSession(ctx, o)
	if err != nil {
		return err
	}
	switch o.Mode {
	case ModeMigrate:
		return s.runMigrate(ctx)
	case ModeConfirm:
		return s.runConfirm(ctx)
	case ModeRollback:
		return s.runRollback(ctx)
	case ModeStatus:
		return s.runStatus(ctx)
	}
	return fmt.Errorf("internal error: unknown mode %q", o.Mode)
}
