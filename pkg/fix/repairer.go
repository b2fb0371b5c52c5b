package fix

import (
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// Settings are how a Repairer works; fix, the guard (fix --watch) and
// migrate --fix fill them from their flags.
type Settings struct {
	Client    *readstate.Client
	Namespace string
	Strategy  Strategy
	// DryRun must be cmdutil.DryRunNone (or cmdutil.DryRunServer) for any
	// write to be sent; the zero value sends none.
	DryRun cmdutil.DryRun
	// Wait for verification after acting (verify), up to Timeout, reading
	// every PollInterval (2s when zero).
	Wait         bool
	Timeout      time.Duration
	PollInterval time.Duration
	// PendingThreshold is passed to detect (its default when zero).
	PendingThreshold time.Duration
	// Printer prints the kubectl-style lines and progress.
	Printer *Printer
	// FieldManager names the writer in managedFields (--field-manager);
	// "" is cmdutil.DefaultFieldManager.
	FieldManager string
}

// Backups say where a Repairer saves what it writes to, before it writes.
type Backups struct {
	// Dir receives the backups and the action log; "" is
	// DefaultBackupDir(Now).
	Dir string
	// To is --backup-to: "" or BackupToDir for the folder only.
	To  string
	Now time.Time
}

// NewRepairer builds a Repairer. Unless it is a dry run, it also opens the
// backup folder with its action log and, with --backup-to configmap, the
// ConfigMap destination: no write is ever sent without them. Close the
// Repairer when done.
func NewRepairer(s Settings, b Backups) (*Repairer, error) {
	r := &Repairer{Settings: s}
	if r.PollInterval <= 0 {
		r.PollInterval = 2 * time.Second
	}
	if r.PendingThreshold <= 0 {
		r.PendingThreshold = detect.DefaultPendingThreshold
	}
	if r.FieldManager == "" {
		r.FieldManager = cmdutil.DefaultFieldManager
	}
	if s.DryRun != cmdutil.DryRunNone {
		return r, nil
	}
	dir := b.Dir
	if dir == "" {
		dir = DefaultBackupDir(b.Now)
	}
	bk, err := OpenBackup(dir)
	if err != nil {
		return nil, err
	}
	cm, err := OpenConfigMapBackup(b.To, s.Client.Config, s.Namespace, b.Now)
	if err != nil {
		_ = bk.Close()
		return nil, err
	}
	if cm != nil {
		cm.FieldManager = r.FieldManager
	}
	r.Backup, r.ConfigMaps = bk, cm
	return r, nil
}

// BackupsGoTo says where the backups and the action log go ("" in a dry
// run, which writes none).
func (r *Repairer) BackupsGoTo() string {
	if r.Backup == nil {
		return ""
	}
	return r.Backup.Dir + r.ConfigMaps.Where(r.Namespace)
}

// Close closes the action log.
func (r *Repairer) Close() error {
	if r.Backup == nil {
		return nil
	}
	return r.Backup.Close()
}
