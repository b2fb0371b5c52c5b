package cmd

import (
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// newFixCommand is a placeholder until the fix command lands.
func newFixCommand(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:    "fix",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("fix is not implemented yet")
		},
	}
}
