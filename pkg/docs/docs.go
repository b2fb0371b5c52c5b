// Package docs is the one home of the links to the project's documentation
// that messages print. An operator who installed with krew has no copy of
// the repository, so a message names an https link, never a repo path.
package docs

// Base is the documentation folder at the project's repository (the
// homepage in .krew.yaml and .goreleaser.yaml).
const Base = "https://github.com/longhorn-engines/kubectl-longhorn-engines/blob/main/"

// URL links a file of the repository, e.g. URL("docs/rbac.md").
func URL(path string) string { return Base + path }

// The documents messages point to (constants, so messages built from them
// stay constants).
const (
	RBAC            = Base + "docs/rbac.md"
	Troubleshooting = Base + "docs/troubleshooting-two-active-engines.md"
	SupportMatrix   = Base + "docs/support-matrix.md"
	ExitCodes       = Base + "docs/exit-codes.md"
	Deploy          = Base + "deploy/README.md"
	GuardJob        = Base + "deploy/guard-job.yaml"
	GuardRBAC       = Base + "deploy/rbac-guard.yaml"
	// ConfirmCleanup: Longhorn 1.12's confirm clean-up under a conflict.
	ConfirmCleanup = Base + "docs/troubleshooting-migration-family.md#confirm-clean-up-on-longhorn-112"
)
