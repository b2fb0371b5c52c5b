package readstate

import (
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// bundleFS is a support bundle as a set of files, whether a zip or the folder
// it was extracted to. Only names are listed up front; a file's content is
// read when opened, so files the analysis does not need (pods, events, other
// namespaces' logs, node bundles) are never read at all.
type bundleFS interface {
	// files lists regular files by slash-separated path inside the bundle.
	files() []string
	open(name string) (io.ReadCloser, error)
	close() error
}

// dirBundle is an extracted bundle.
type dirBundle struct {
	root  string
	names []string
}

// openDirBundle lists the files under root. Unreadable sub-folders are
// reported and skipped.
func openDirBundle(root string, warnf func(string, ...any)) (*dirBundle, error) {
	b := &dirBundle{root: root}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			warnf("%s: %v; skipped", p, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			rel, rerr := filepath.Rel(root, p)
			if rerr == nil {
				b.names = append(b.names, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (b *dirBundle) files() []string { return b.names }

func (b *dirBundle) open(name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(b.root, filepath.FromSlash(name)))
}

func (b *dirBundle) close() error { return nil }

// cleanEntryName makes zip entry names comparable: forward slashes, no
// leading "./" or "/". Names that climb out ("..") are dropped.
func cleanEntryName(name string) (string, bool) {
	slashed := strings.ReplaceAll(name, `\`, "/")
	if strings.HasSuffix(slashed, "/") {
		return "", false // a directory entry
	}
	for _, part := range strings.Split(slashed, "/") {
		if part == ".." {
			return "", false
		}
	}
	n := path.Clean("/" + slashed)[1:]
	return n, n != "" && n != "."
}
