package fix

import (
	"io"
	"time"
)

// testHooks let tests of this package reach into a run of the real command
// tree. They are nil in production.
var testHooks struct {
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
