package fix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

type createdConfigMaps []*corev1.ConfigMap

func (c *createdConfigMaps) Create(_ context.Context, cm *corev1.ConfigMap, _ metav1.CreateOptions) (*corev1.ConfigMap, error) {
	*c = append(*c, cm)
	return cm, nil
}

// Whatever the volume's name, the ConfigMap's name is valid, and a label
// value that would be invalid is left out rather than failing the backup.
func TestConfigMapBackupNames(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ActionLogName), []byte("log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got createdConfigMaps
	c := &ConfigMapBackup{Client: &got, RunID: NewRunID(time.Date(2026, 12, 2, 16, 7, 54, 0, time.UTC))}
	if !strings.HasPrefix(c.RunID, "20261202t160754z-") || len(validation.IsValidLabelValue(c.RunID)) > 0 {
		t.Errorf("run id %q", c.RunID)
	}
	for _, vol := range []string{"pvc-1", strings.Repeat("v", 70), strings.Repeat("a-", 120) + "b"} {
		path := filepath.Join(dir, vol+".2.yaml")
		if err := os.WriteFile(path, []byte("---\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		name, err := c.Save(context.Background(), vol, path, dir)
		if err != nil {
			t.Fatal(err)
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			t.Errorf("%s: name %q: %v", vol, name, errs)
		}
		cm := got[len(got)-1]
		if _, ok := cm.Labels[LabelVolume]; ok != (len(vol) <= 63) {
			t.Errorf("%s: volume label %v", vol, cm.Labels)
		}
	}
	if got[0].Name != "longhorn-engines-"+c.RunID+"-pvc-1.2" {
		t.Errorf("name %q", got[0].Name)
	}
}
