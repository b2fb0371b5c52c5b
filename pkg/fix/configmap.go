package fix

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// Where --backup-to sends backups. The folder (--backup-dir) always gets
// them: it also holds the complete action log.
const (
	BackupToDir       = "dir"
	BackupToConfigMap = "configmap"
)

// BackupTargets are the values of --backup-to.
var BackupTargets = []string{BackupToDir, BackupToConfigMap}

// Labels of a backup ConfigMap, for `kubectl get configmaps -l ...`.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "kubectl-longhorn-engines"
	LabelRunID     = "longhorn-engines.io/run-id"
	LabelVolume    = "longhorn-engines.io/volume"
)

// The keys of a backup ConfigMap's data.
const (
	ConfigMapObjectsKey = "objects.yaml"
	ConfigMapLogKey     = ActionLogName
)

// ConfigMapCreator creates ConfigMaps in one namespace; client-go's
// ConfigMapInterface is one.
type ConfigMapCreator interface {
	Create(ctx context.Context, cm *corev1.ConfigMap, opts metav1.CreateOptions) (*corev1.ConfigMap, error)
}

// ConfigMapBackup copies each backup file, with the action log so far, into
// a new ConfigMap in the Longhorn namespace before the write it backs up, so
// the backup outlives the pod of an in-cluster guard. It only creates: a
// ConfigMap is never updated, so the Role needs nothing but create.
type ConfigMapBackup struct {
	Client ConfigMapCreator
	// RunID names the run in every ConfigMap's name and label.
	RunID string
	// FieldManager names the writer in managedFields (NewRepairer sets
	// its own).
	FieldManager string
}

// OpenConfigMapBackup is --backup-to's ConfigMap destination in namespace,
// with cfg's credentials; nil when backupTo is "dir".
func OpenConfigMapBackup(backupTo string, cfg *rest.Config, namespace string, now time.Time) (*ConfigMapBackup, error) {
	if backupTo != BackupToConfigMap {
		return nil, nil //nolint:nilnil // no ConfigMap destination is not an error
	}
	c, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &ConfigMapBackup{Client: c.ConfigMaps(namespace), RunID: NewRunID(now)}, nil
}

// ValidateBackupTo checks --backup-to.
func ValidateBackupTo(v string) error {
	if v != BackupToDir && v != BackupToConfigMap {
		return fmt.Errorf("--backup-to must be %s or %s (got %q)", BackupToDir, BackupToConfigMap, v)
	}
	return nil
}

// NewRunID is the time and a random suffix: two guards started in the same
// second still differ. It is a valid label value and name part.
func NewRunID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return strings.ToLower(now.UTC().Format("20060102t150405z")) + "-" + hex.EncodeToString(b)
}

// Save creates the ConfigMap for the backup file at path (written by
// Backup.Save) with the action log of dir. Its name is
// longhorn-engines-<run id>-<file name without .yaml>, so a second backup of
// a volume in one run (vol.2.yaml) gets its own.
func (c *ConfigMapBackup) Save(ctx context.Context, volume, path, dir string) (string, error) {
	objects, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	log, err := os.ReadFile(filepath.Join(dir, ActionLogName))
	if err != nil {
		return "", err
	}
	name := "longhorn-engines-" + c.RunID + "-" + strings.TrimSuffix(filepath.Base(path), ".yaml")
	if len(name) > validation.DNS1123SubdomainMaxLength {
		name = strings.TrimRight(name[:validation.DNS1123SubdomainMaxLength], "-.")
	}
	labels := map[string]string{LabelManagedBy: ManagedBy, LabelRunID: c.RunID}
	if len(validation.IsValidLabelValue(volume)) == 0 {
		labels[LabelVolume] = volume
	}
	immutable := true // a backup never changes
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Immutable:  &immutable,
		Data: map[string]string{
			ConfigMapObjectsKey: string(objects),
			ConfigMapLogKey:     string(log),
		},
	}
	if _, err := c.Client.Create(ctx, cm, metav1.CreateOptions{FieldManager: c.FieldManager}); err != nil {
		return "", fmt.Errorf("creating ConfigMap %s: %w", name, err)
	}
	return name, nil
}

// Where is the progress line's mention of the ConfigMaps, empty for none.
func (c *ConfigMapBackup) Where(namespace string) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(" and to a ConfigMap per repaired volume in %s (kubectl -n %s get configmaps -l %s=%s)", namespace, namespace, LabelRunID, c.RunID)
}

// Probe sends a server dry run of a create, which the API server authorizes
// like the create itself and then discards: a guard checks at start that it
// may create its backups. A nil c sends nothing.
func (c *ConfigMapBackup) Probe(ctx context.Context) error {
	if c == nil {
		return nil
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:   "longhorn-engines-" + c.RunID + "-permission-probe",
		Labels: map[string]string{LabelManagedBy: ManagedBy, LabelRunID: c.RunID},
	}}
	_, err := c.Client.Create(ctx, cm, metav1.CreateOptions{DryRun: cmdutil.DryRunServer.Sent(), FieldManager: c.FieldManager})
	return err
}
