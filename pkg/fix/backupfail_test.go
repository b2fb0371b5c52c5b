package fix_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// No write without its backup on disk: when the backup cannot be written
// (a full disk, a read-only or unusable folder), fix writes nothing.

// fullStore fails the way a full disk does, after the first n saves.
type fullStore struct {
	next fix.BackupStore
	n    int
}

func (s *fullStore) Save(volume string, content []byte) (string, error) {
	if s.n <= 0 {
		return "", &os.PathError{Op: "write", Path: volume + ".yaml", Err: syscall.ENOSPC}
	}
	s.n--
	return s.next.Save(volume, content)
}

func TestFixWritesNothingWithoutItsBackup(t *testing.T) {
	t.Run("disk full", func(t *testing.T) {
		ctx := reset(t)
		create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol-a").Add(stripVersion(testenv.TwoActiveEngines(testenv.L14a, "vol-b"))))
		before := versions(t, ctx)
		var store *fullStore
		full := func(next fix.BackupStore) fix.BackupStore { store = &fullStore{next: next, n: 1}; return store }
		dir := filepath.Join(t.TempDir(), "backup")
		res := cli(t, cluster.KubeconfigPath(), fix.Hooks{BackupStore: full}).Run(ctx, fixArgs("vol-a", "vol-b", "--parallel", "1", "--yes", "--wait=false", "--backup-dir", dir)...)
		if res.Code != cmdutil.ExitNeedsAction {
			t.Errorf("exit %d, want %d", res.Code, cmdutil.ExitNeedsAction)
		}
		testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol-b" failed: backup failed, nothing written`, "no space left on device")
		after := versions(t, ctx)
		for k, v := range before {
			if strings.Contains(k, "vol-b") && after[k] != v {
				t.Errorf("%s written without its backup", k)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "vol-b.yaml")); err == nil {
			t.Error("a partial backup of vol-b was left")
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(left) != 0 {
			t.Errorf("temporary files left: %v", left)
		}
	})
	t.Run("folder cannot be created", func(t *testing.T) {
		ctx := reset(t)
		create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol-a"))
		before := versions(t, ctx)
		file := filepath.Join(t.TempDir(), "a-file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		res := runFix(t, ctx, "vol-a", "--yes", "--wait=false", "--backup-dir", filepath.Join(file, "backup"))
		if res.Code != cmdutil.ExitNeedsAction || strings.Count(res.Stderr, "error: ") != 1 {
			t.Errorf("exit %d, want %d with one error line", res.Code, cmdutil.ExitNeedsAction)
		}
		testenv.Contains(t, "stderr", res.Stderr, "nothing was changed")
		testenv.AssertUnchanged(t, before, versions(t, ctx))
	})
	t.Run("read-only folder", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root writes into a read-only folder; the full-disk case covers a failing write")
		}
		ctx := reset(t)
		create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol-a"))
		before := versions(t, ctx)
		dir := filepath.Join(t.TempDir(), "backup")
		if err := os.Mkdir(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
		res := runFix(t, ctx, "vol-a", "--yes", "--wait=false", "--backup-dir", dir)
		if res.Code != cmdutil.ExitNeedsAction {
			t.Errorf("exit %d, want %d", res.Code, cmdutil.ExitNeedsAction)
		}
		testenv.AssertUnchanged(t, before, versions(t, ctx))
	})
}
