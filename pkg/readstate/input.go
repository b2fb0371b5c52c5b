package readstate

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// Input is where a read-only command reads: the cluster, or offline a
// support bundle (--bundle) or `kubectl get -o yaml|json` output (-f), as
// cli-runtime's FileNameFlags are kubectl's -f. scan, describe and preflight
// embed it, so the flags, their checks and the choice are one.
type Input struct {
	// Bundle is a support bundle, zip or extracted folder.
	Bundle string
	// Filenames is nil unless -f was given: `-f ""` leaves it empty, not
	// nil, and must not fall back to the cluster (Validate refuses it).
	Filenames []string
}

// AddFlags adds --bundle and -f/--filename, with their completion.
func (in *Input) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&in.Bundle, "bundle", "", "Read a Longhorn support bundle (zip or extracted folder) instead of the cluster")
	f.StringSliceVarP(&in.Filenames, "filename", "f", nil, "Read Longhorn objects from YAML/JSON files or folders instead of the cluster (repeatable; - reads stdin)")
	_ = cobra.MarkFlagFilename(f, "bundle", "zip")
	_ = cobra.MarkFlagFilename(f, "filename", "yaml", "yml", "json")
}

// Offline reports whether the command reads a bundle or files, not the
// cluster.
func (in *Input) Offline() bool { return in.Bundle != "" || in.Filenames != nil }

// Validate checks the flags before anything is read.
func (in *Input) Validate() error {
	if in.Bundle != "" && in.Filenames != nil {
		return errors.New("--bundle and -f/--filename cannot be used together")
	}
	if in.Filenames != nil && len(in.Filenames) == 0 {
		return errors.New("-f/--filename needs a file name (or - for stdin)")
	}
	for _, f := range in.Filenames {
		if f == "" {
			return errors.New("-f/--filename needs a file name (or - for stdin)")
		}
	}
	return nil
}

// Client is the client a live read needs: none offline, else c when a test
// has given one, else the flags' (Ensure).
func (in *Input) Client(c *Client, cf *genericclioptions.ConfigFlags) (*Client, error) {
	if in.Offline() {
		return c, nil
	}
	return Ensure(c, cf)
}

// Load reads the offline input (LoadOffline) in the namespace -n names
// when given: an absent -n lets the input decide (longhorn-system if
// present, else its only Longhorn namespace).
func (in *Input) Load(ctx context.Context, stdin io.Reader, cf *genericclioptions.ConfigFlags, o OfflineOptions) (*Offline, error) {
	o.Namespace = ""
	if cf != nil && cf.Namespace != nil {
		o.Namespace = *cf.Namespace
	}
	return LoadOffline(ctx, in.Bundle, in.Filenames, stdin, o)
}
