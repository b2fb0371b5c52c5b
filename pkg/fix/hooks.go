package fix

import (
	"io"
	"time"
)

// Hooks let a test follow and steer one run of fix from outside. They are
// Config.Hooks, zero in production: tests that run the real command tree
// hand them in when they build it (cmd.Hooks).
type Hooks struct {
	// AfterPlan runs after the plan is printed and confirmed, before the
	// first re-check.
	AfterPlan func()
	// BeforeWrite runs right before each write, after the re-check and the
	// backup.
	BeforeWrite func(engine string)
	// AfterWrite runs right after each successful write.
	AfterWrite func(engine string)
	// Terminal overrides the terminal test of stdin.
	Terminal func(io.Reader) bool
	// PollInterval overrides the verification poll interval.
	PollInterval time.Duration
	// BackupStore wraps the backup folder's store (a full disk, say).
	BackupStore func(BackupStore) BackupStore
	// ConfigMaps replaces the API client of --backup-to configmap.
	ConfigMaps ConfigMapCreator
}
