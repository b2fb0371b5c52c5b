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
	"slices"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
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

// volumeOptions is what every migrate subcommand shares: one VOLUME in
// the Longhorn namespace, the client and the streams.
type volumeOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	genericiooptions.IOStreams

	Volume string

	args      []string
	namespace string
	client    *readstate.Client
}

// Complete takes the volume and builds the client.
func (o *volumeOptions) Complete(args []string) error {
	o.args = args
	if len(args) == 1 {
		o.Volume = args[0]
	}
	o.namespace = cmdutil.Namespace(o.ConfigFlags)
	c, err := readstate.Ensure(o.client, o.ConfigFlags)
	o.client = c
	return err
}

// validateArgs is the last check of every subcommand: exactly one VOLUME.
func (o *volumeOptions) validateArgs() error {
	if len(o.args) != 1 {
		return fmt.Errorf("exactly one VOLUME is required (got %d arguments)", len(o.args))
	}
	return nil
}

// StepOptions are the flags the writing subcommands (migrate, confirm,
// rollback) share; each one's Options embeds them.
type StepOptions struct {
	volumeOptions

	To      string
	Timeout time.Duration
	Yes     bool
	DryRun  string
	Force   bool
	// FieldManager names migrate in managedFields (--field-manager).
	FieldManager string
	// PollInterval is how often a wait re-reads the volume.
	PollInterval time.Duration
	// Terminal replaces the terminal test of In at the prompt (tests); nil
	// means cmdutil.IsTerminal.
	Terminal func(io.Reader) bool

	dryRun cmdutil.DryRun
}

func newStepOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) StepOptions {
	return StepOptions{
		volumeOptions: volumeOptions{ConfigFlags: cf, IOStreams: streams},
		Timeout:       DefaultTimeout,
		DryRun:        "none",
		PollInterval:  DefaultPollInterval,
		FieldManager:  cmdutil.DefaultFieldManager,
	}
}

// Complete parses --dry-run, then takes the volume and builds the client.
func (o *StepOptions) Complete(args []string) error {
	d, err := cmdutil.DryRunFlag(o.DryRun, o.ErrOut)
	if err != nil {
		return err
	}
	o.dryRun = d
	return o.volumeOptions.Complete(args)
}

// validate is every writing subcommand's Validate: the shared flags'
// values, then the subcommand's own checks (own, first failure first),
// then the arguments. It changes nothing.
func (o *StepOptions) validate(own ...error) error {
	if o.Timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	if err := cmdutil.ValidateFieldManager(o.FieldManager); err != nil {
		return err
	}
	if o.PollInterval <= 0 {
		return errors.New("--poll-interval must be positive")
	}
	for _, err := range own {
		if err != nil {
			return err
		}
	}
	return o.validateArgs()
}

// session starts a run of a writing subcommand, with fix the --fix flags
// of migrate and confirm (zero for rollback).
func (o *StepOptions) session(ctx context.Context, fix FixOptions) (*session, error) {
	return newSession(ctx, o, fix, true)
}

// FixOptions are --fix and its flags (migrate and confirm): repair a
// #6642 state left by the confirm the way 'fix VOLUME' would.
type FixOptions struct {
	Fix bool
	// BackupDir receives the objects before --fix changes them.
	BackupDir string
	// Events records Kubernetes Events of a --fix repair (--events).
	Events bool
}

// validateDryRun checks --fix against --dry-run.
func (o *FixOptions) validateDryRun(d cmdutil.DryRun) error {
	if o.Fix && d != cmdutil.DryRunNone {
		return errors.New("--fix cannot be combined with --dry-run")
	}
	return nil
}

// Options is `migrate VOLUME --to NODE`, filled by flags and Complete,
// checked by Validate.
type Options struct {
	StepOptions
	FixOptions
	Confirm bool
}

// NewOptions returns migrate's defaults.
func NewOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *Options {
	return &Options{StepOptions: newStepOptions(cf, streams), FixOptions: FixOptions{Events: true}}
}

// Validate checks flag values and arguments before any request; it changes
// nothing.
func (o *Options) Validate() error {
	var noTo error
	if o.To == "" {
		noTo = errors.New("--to NODE is required: the Longhorn node to migrate the volume to")
	}
	return o.validate(noTo, o.validateDryRun(o.dryRun))
}

// Run migrates. The returned error carries the exit code (see
// cmdutil/exit.go).
func (o *Options) Run(ctx context.Context) error {
	s, err := o.session(ctx, o.FixOptions)
	if err != nil {
		return err
	}
	return s.runMigrate(ctx, o.Confirm)
}

// ConfirmOptions is `migrate confirm VOLUME`.
type ConfirmOptions struct {
	StepOptions
	FixOptions
}

// NewConfirmOptions returns confirm's defaults.
func NewConfirmOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *ConfirmOptions {
	return &ConfirmOptions{StepOptions: newStepOptions(cf, streams), FixOptions: FixOptions{Events: true}}
}

// Validate checks flag values and arguments before any request.
func (o *ConfirmOptions) Validate() error {
	return o.validate(o.validateDryRun(o.dryRun))
}

// Run confirms the migration in flight.
func (o *ConfirmOptions) Run(ctx context.Context) error {
	s, err := o.session(ctx, o.FixOptions)
	if err != nil {
		return err
	}
	return s.runConfirm(ctx)
}

// RollbackOptions is `migrate rollback VOLUME`.
type RollbackOptions struct {
	StepOptions
}

// NewRollbackOptions returns rollback's defaults.
func NewRollbackOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *RollbackOptions {
	return &RollbackOptions{StepOptions: newStepOptions(cf, streams)}
}

// Validate checks flag values and arguments before any request.
func (o *RollbackOptions) Validate() error {
	return o.validate()
}

// Run rolls the migration in flight back.
func (o *RollbackOptions) Run(ctx context.Context) error {
	s, err := o.session(ctx, FixOptions{})
	if err != nil {
		return err
	}
	return s.runRollback(ctx)
}

// StatusOutputs are the values of `migrate status -o`.
var StatusOutputs = []string{"text", "json", "yaml"}

// StatusOptions is `migrate status VOLUME` (read-only).
type StatusOptions struct {
	volumeOptions
	Output string
}

// NewStatusOptions returns status's defaults.
func NewStatusOptions(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *StatusOptions {
	return &StatusOptions{volumeOptions: volumeOptions{ConfigFlags: cf, IOStreams: streams}, Output: "text"}
}

// Validate checks -o and the arguments before any request.
func (o *StatusOptions) Validate() error {
	if !slices.Contains(StatusOutputs, o.Output) {
		return fmt.Errorf("unknown output format %q: use text, json or yaml", o.Output)
	}
	return o.validateArgs()
}

// Run prints where the volume's migration stands. A status session has
// no step flags: it writes nothing and waits for nothing, and reads a
// volume whose Longhorn version it cannot tell.
func (o *StatusOptions) Run(ctx context.Context) error {
	s, err := newSession(ctx, &StepOptions{volumeOptions: o.volumeOptions}, FixOptions{}, false)
	if err != nil {
		return err
	}
	return s.runStatus(ctx, o.Output)
}
