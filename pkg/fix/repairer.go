package fix

import (
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/inventory"
)

// RepairerConfig is what fix, the guard (fix --watch) and migrate --fix
// build their Repairer from.
type RepairerConfig struct {
	Client    *inventory.Client
	Namespace string
	Strategy  Strategy
	DryRun    cmdutil.DryRun
	// Wait for verification after acting, up to Timeout, reading every
	// PollInterval (2s when zero).
	Wait         bool
	Timeout      time.Duration
	PollInterval time.Duration
	// BackupDir receives the backups and the action log when writes are
	// sent; "" is DefaultBackupDir(Now).
	BackupDir string
	// BackupTo is --backup-to: "" or BackupToDir for the folder only.
	BackupTo string
	Now      time.Time
	Printer  *Printer
}

// NewRepairer builds a Repairer. Unless it is a dry run, it also opens the
// backup folder with its action log and, with --backup-to configmap, the
// ConfigMap destination: no write is ever sent without them. Close the
// Repairer when done.
func NewRepairer(c RepairerConfig) (*Repairer, error) {
	r := &Repairer{
		Client: c.Client, Namespace: c.Namespace, Strategy: c.Strategy, DryRun: c.DryRun,
		Wait: c.Wait, Timeout: c.Timeout, PollInterval: c.PollInterval,
		PendingThreshold: detect.DefaultPendingThreshold, Printer: c.Printer,
	}
	if r.PollInterval <= 0 {
		r.PollInterval = 2 * time.Second
	}
	if c.DryRun != cmdutil.DryRunNone {
		return r, nil
	}
	dir := c.BackupDir
	if dir == "" {
		dir = DefaultBackupDir(c.Now)
	}
	b, err := OpenBackup(dir)
	if err != nil {
		return nil, err
	}
	cm, err := OpenConfigMapBackup(c.BackupTo, c.Client.Config, c.Namespace, c.Now)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	r.Backup, r.ConfigMaps = b, cm
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
