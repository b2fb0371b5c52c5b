package fix

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Backup is the folder that receives, before the first write, the YAML of
// every object of a volume as it was re-read, and the action log.
type Backup struct {
	Dir string
	Log *ActionLog
	// Store keeps the objects; the folder's files unless set.
	Store BackupStore
}

// BackupStore keeps the YAML of a volume's objects before fix writes to
// them. Save returns where the copy is (a file, or another destination's
// name) only once it is durable, and never overwrites an earlier copy: a
// write is sent only after Save returned. The folder is one store; others
// (a ConfigMap) fit behind the same method.
type BackupStore interface {
	Save(volume string, content []byte) (where string, err error)
}

// dirStore writes <volume>.yaml files into a folder.
type dirStore struct {
	dir  string
	mu   sync.Mutex
	used map[string]bool
}

// DefaultBackupDir is a new folder in the working directory, named after the
// time, so two runs never mix their files.
func DefaultBackupDir(now time.Time) string {
	return "longhorn-engines-fix-" + now.UTC().Format("20060102T150405Z")
}

// OpenBackup creates dir (private: the objects describe the cluster) and
// opens its action log for appending.
func OpenBackup(dir string) (*Backup, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the backup folder: %w", err)
	}
	log, err := OpenActionLog(filepath.Join(dir, ActionLogName))
	if err != nil {
		return nil, err
	}
	return &Backup{Dir: dir, Log: log, Store: &dirStore{dir: dir, used: map[string]bool{}}}, nil
}

// Close closes the action log.
func (b *Backup) Close() error { return b.Log.Close() }

// Save writes the objects of one volume to <volume>.yaml (or <volume>.N.yaml
// when a file of that name exists: a backup is never overwritten) and syncs
// it to disk before returning, so no write happens without its backup.
//
// The file holds one YAML document per object (volume, engines, replicas),
// which `kubectl create -f` re-creates and `kubectl apply -f` restores. A
// v1 List would do on a real cluster, but separate documents need nothing
// of the server beyond the Longhorn CRDs. Stripped: uid, resourceVersion, creationTimestamp,
// generation, managedFields, selfLink and deletion fields, which the server
// owns and which make create fail or apply conflict. Kept: labels,
// annotations, finalizers, owner references (the volume's uid is unchanged
// by a repair, so they stay valid) and status. Status is kept on purpose:
// create and apply ignore it on resources with a status subresource, as all
// of Longhorn's have, so it cannot break a restore, and it is the evidence
// of what the objects looked like when fix decided to act.
func (b *Backup) Save(volume, header string, objs []*unstructured.Unstructured) (string, error) {
	var text strings.Builder
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		text.WriteString("# " + line + "\n")
	}
	for _, o := range objs {
		body, err := yaml.Marshal(restorable(o).Object)
		if err != nil {
			return "", fmt.Errorf("encoding the backup of %s: %w", volume, err)
		}
		text.WriteString("---\n")
		text.Write(body)
	}
	where, err := b.Store.Save(volume, []byte(text.String()))
	if err != nil {
		return "", fmt.Errorf("writing the backup of %s: %w", volume, err)
	}
	return where, nil
}

// Save writes <volume>.yaml, or <volume>.N.yaml when that name is taken.
func (s *dirStore) Save(volume string, content []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n := 1; ; n++ {
		name := volume + ".yaml"
		if n > 1 {
			name = fmt.Sprintf("%s.%d.yaml", volume, n)
		}
		path := filepath.Join(s.dir, name)
		if s.used[path] {
			continue
		}
		err := writeAtomic(path, content)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		s.used[path] = true
		return path, nil
	}
}

// restorable strips what the server owns.
func restorable(o *unstructured.Unstructured) *unstructured.Unstructured {
	c := o.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields",
		"selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	return c
}

// writeAtomic makes path appear whole or not at all: the content goes to a
// temporary file in the same folder, is synced, then linked to path (which
// fails if path exists: a backup is never overwritten), and the folder is
// synced so the new name survives a crash. A full or read-only disk fails
// here, before any write to the cluster.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	if err := f.Chmod(0o600); err != nil {
		_ = f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// syncDir flushes a folder's entries (new names) to disk.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
