package cmd

import (
	"errors"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// newMigrateCommand is a placeholder until the migrate command lands.
func newMigrateCommand(cf *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:    "migrate",
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			return errors.New("migrate is not implemented yet")
		},
	}
}
