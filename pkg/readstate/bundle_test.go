package readstate

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func loadOK(t *testing.T, path string, o OfflineOptions) (*Offline, *warnings) {
	t.Helper()
	w := &warnings{}
	o.Warnf = w.f
	off, err := LoadBundle(context.Background(), path, o)
	if err != nil {
		t.Fatalf("LoadBundle(%s): %v\nwarnings:\n%s", filepath.Base(path), err, w)
	}
	return off, w
}

// The zip and its extracted folder read the same, with the bundle's time,
// version and namespace, the "null" values undone and the log evidence.
func TestLoadBundleZipAndFolder(t *testing.T) {
	b := fxBundle()
	dir := t.TempDir()
	zipPath, folder := b.WriteZipAndDir(t, dir)
	var first string
	for _, path := range []string{zipPath, folder, filepath.Dir(folder)} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			off, w := loadOK(t, path, OfflineOptions{})
			if len(w.lines) > 0 {
				t.Errorf("warnings on a clean bundle:\n%s", w)
			}
			st := off.State
			if st.Namespace != fxNS || st.Version.String() != "v1.4.3" || st.VersionSource != "setting current-longhorn-version" || !st.Now.Equal(fxCreated) {
				t.Errorf("namespace %q version %s (%s) now %s", st.Namespace, st.Version, st.VersionSource, st.Now)
			}
			if off.Source != "bundle:"+path {
				t.Errorf("source %q", off.Source)
			}
			if len(st.Volumes) != 3 || len(st.Engines) != 4 || len(st.Replicas) != 4 || len(st.Nodes) != 2 || len(st.InstanceManagers) != 2 || !st.InstanceManagersRead {
				t.Errorf("objects: %d volumes, %d engines, %d replicas, %d nodes, %d ims (read %t)",
					len(st.Volumes), len(st.Engines), len(st.Replicas), len(st.Nodes), len(st.InstanceManagers), st.InstanceManagersRead)
			}
			for _, v := range st.Volumes {
				if v.Spec.MigrationNodeID != "" || v.Status.PendingNodeID != "" || v.Spec.LastAttachedBy != "" {
					t.Errorf("volume %s kept a \"null\" value: %+v", v.Name, v.Spec)
				}
			}
			if off.OrphansUnreliable != "" || !off.LogsRead {
				t.Errorf("orphans unreliable %q, logs read %t", off.OrphansUnreliable, off.LogsRead)
			}
			stuck := off.Logs["pvc-stuck"]
			if stuck.Count != 3 || !stuck.FirstSeen.Equal(fxT1.Add(-time.Minute)) || !stuck.LastSeen.Equal(fxT1.Add(time.Hour)) ||
				stuck.Message != "BUG: found the second active engine pvc-stuck-e-bbbb2222 besides pvc-stuck-e-aaaa1111" || len(stuck.Files) != 2 {
				t.Errorf("pvc-stuck evidence %+v", stuck)
			}
			if off.Logs["pvc-logonly"].Count != 1 || len(off.Logs) != 2 {
				t.Errorf("evidence %+v (the UI log must not count)", off.Logs)
			}
			s := summary(st)
			if first == "" {
				first = s
			} else if s != first {
				t.Errorf("state differs between zip and folder:\n%s\n---\n%s", first, s)
			}
		})
	}
}

// recordingFS notes which files the loader opens.
type recordingFS struct {
	bundleFS
	opened []string
}

func (r *recordingFS) open(name string) (io.ReadCloser, error) {
	r.opened = append(r.opened, name)
	return r.bundleFS.open(name)
}

// Only the Longhorn object files of the chosen namespace, metadata.yaml and
// the managers' logs are opened: no pods, events, other namespaces, other
// pods' logs or node bundles.
func TestLoadBundleOpensOnlyWhatItNeeds(t *testing.T) {
	b := fxBundle()
	b.Objects = append(b.Objects, fxObjects("other-ns", "v1.5.1")...)
	b.Logs["other-ns/longhorn-manager-zzzzz/longhorn-manager.log"] = "x\n"
	node, err := testenv.Zip(map[string][]byte{"node-a/hostinfos/os-release": []byte("ID=sles\n")})
	if err != nil {
		t.Fatal(err)
	}
	b.Extra["nodes/node-a.zip"] = node
	dir, err := b.WriteDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := openDirBundle(dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingFS{bundleFS: fsys}
	w := &warnings{}
	if _, err := loadBundle(context.Background(), rec, bundleInfo{path: dir}, OfflineOptions{Warnf: w.f}); err != nil {
		t.Fatal(err)
	}
	got := append([]string(nil), rec.opened...)
	sort.Strings(got)
	want := []string{"logs/longhorn-system/longhorn-manager-aaaaa/longhorn-manager.log",
		"logs/longhorn-system/longhorn-manager-bbbbb/longhorn-manager.log",
		"logs/longhorn-system/longhorn-manager-bbbbb/longhorn-manager.log.1",
		"metadata.yaml"}
	for _, p := range []string{"instancemanagers", "nodes", "replicas", "settings", "volumes", "engines"} {
		want = append(want, "yamls/namespaced/longhorn-system/longhorn.io/v1beta2/"+p+".yaml")
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("opened:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLoadBundleNamespaces(t *testing.T) {
	write := func(t *testing.T, namespaces ...string) string {
		b := &testenv.Bundle{CreatedAt: fxCreated, Logs: map[string]string{}}
		for _, ns := range namespaces {
			b.Objects = append(b.Objects, fxObjects(ns, "v1.5.1")...)
		}
		p := b.ZipPath(t, t.TempDir())
		return p
	}
	tests := []struct {
		name       string
		namespaces []string
		flag       string
		want       string
		err        string
	}{
		{"longhorn-system preferred", []string{"longhorn-system", "lh-test"}, "", "longhorn-system", ""},
		{"the only namespace", []string{"storage"}, "", "storage", ""},
		{"-n picks", []string{"longhorn-system", "lh-test"}, "lh-test", "lh-test", ""},
		{"several, no -n", []string{"lh-a", "lh-b"}, "", "", "several namespaces (lh-a, lh-b): choose one with -n"},
		{"-n absent from the bundle", []string{"lh-a"}, "longhorn-system", "", `no Longhorn objects in namespace "longhorn-system"; it has some in lh-a`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			off, err := LoadBundle(context.Background(), write(t, tt.namespaces...), OfflineOptions{Namespace: tt.flag})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if off.State.Namespace != tt.want || len(off.State.Volumes) != 3 {
				t.Errorf("namespace %q with %d volumes, want %q with 3", off.State.Namespace, len(off.State.Volumes), tt.want)
			}
			for _, v := range off.State.Volumes {
				if v.Namespace != tt.want {
					t.Errorf("volume %s/%s leaked in", v.Namespace, v.Name)
				}
			}
		})
	}
}

// Nested node bundles (valid or not) neither break the walk nor are read.
func TestLoadBundleNestedNodeZips(t *testing.T) {
	b := fxBundle()
	good, err := testenv.Zip(map[string][]byte{"node-a/logs/kubelet.log": []byte("found the second active engine x-e-1 besides x-e-0\n")})
	if err != nil {
		t.Fatal(err)
	}
	b.Extra["nodes/node-a.zip"] = good
	b.Extra["nodes/node-b.zip"] = []byte("PK\x03\x04 this is not really a zip")
	b.Extra["nodes/node-c.zip"] = nil
	p := b.ZipPath(t, t.TempDir())
	off, w := loadOK(t, p, OfflineOptions{})
	if len(w.lines) != 0 || len(off.State.Volumes) != 3 || len(off.Logs) != 2 {
		t.Errorf("warnings %q, %d volumes, logs %v", w.lines, len(off.State.Volumes), off.Logs)
	}
}

// zipYAMLsFirst orders a bundle zip as metadata, settings, volumes,
// engines, the other objects, then logs, so a cut lands where a test wants.
func zipYAMLsFirst(t *testing.T, b *testenv.Bundle) ([]byte, map[string][]byte) {
	t.Helper()
	files, err := b.Files()
	if err != nil {
		t.Fatal(err)
	}
	rank := func(n string) int {
		switch {
		case strings.HasSuffix(n, "metadata.yaml"):
			return 0
		case strings.HasSuffix(n, "/settings.yaml"):
			return 1
		case strings.HasSuffix(n, "/volumes.yaml"):
			return 2
		case strings.HasSuffix(n, "/engines.yaml"):
			return 3
		case strings.Contains(n, "/yamls/"):
			return 4
		}
		return 5
	}
	data, err := testenv.ZipSorted(files, func(a, b string) bool { return rank(a) < rank(b) })
	if err != nil {
		t.Fatal(err)
	}
	return data, files
}

// A truncated zip (an interrupted download) has lost its table of contents:
// the entries before the cut are still read, with one warning naming the
// zip, and one naming the entry that was cut.
func TestLoadBundleTruncatedZip(t *testing.T) {
	b := fxBundle()
	b.Logs = fxManagerLogs(fxNS, 20000) // a log big enough to cut inside
	data, _ := zipYAMLsFirst(t, b)
	top := b.Name() + "/"
	offsetOf := func(name string) int {
		off, err := testenv.ZipOffset(data, top+name)
		if err != nil {
			t.Fatal(err)
		}
		return int(off)
	}
	bigLog := "logs/longhorn-system/longhorn-manager-bbbbb/longhorn-manager.log"
	engines := "yamls/namespaced/longhorn-system/longhorn.io/v1beta2/engines.yaml"

	t.Run("cut inside a log", func(t *testing.T) {
		p := testenv.WriteTemp(t, b.Name()+".zip", testenv.TruncateZip(data, offsetOf(bigLog)+20000))
		off, w := loadOK(t, p, OfflineOptions{})
		w.has(t, b.Name()+".zip", "damaged zip", "longhorn-manager.log is cut short")
		w.has(t, bigLog, "read error")
		if len(off.State.Volumes) != 3 || len(off.State.Engines) != 4 || off.OrphansUnreliable != "" {
			t.Errorf("objects lost to a cut in the logs: %d volumes, %d engines, %q", len(off.State.Volumes), len(off.State.Engines), off.OrphansUnreliable)
		}
		if !off.State.Now.Equal(fxCreated) || off.State.Version.String() != "v1.4.3" {
			t.Errorf("metadata or version lost: %s %s", off.State.Now, off.State.Version)
		}
	})
	t.Run("cut inside engines.yaml", func(t *testing.T) {
		p := testenv.WriteTemp(t, b.Name()+".zip", testenv.TruncateZip(data, offsetOf(engines)+40))
		off, w := loadOK(t, p, OfflineOptions{})
		w.has(t, "damaged zip", "engines.yaml is cut short")
		w.has(t, engines, "read error")
		if len(off.State.Volumes) != 3 || len(off.State.Replicas) != 0 || off.OrphansUnreliable == "" {
			t.Errorf("%d volumes, %d replicas (entries after the cut are gone), orphans unreliable %q",
				len(off.State.Volumes), len(off.State.Replicas), off.OrphansUnreliable)
		}
		if off.LogsRead {
			t.Error("logs after the cut were read")
		}
		w.has(t, "no longhorn-manager logs")
	})
	t.Run("only the table of contents lost", func(t *testing.T) {
		zr := bytes.LastIndex(data, []byte("PK\x01\x02"))
		p := testenv.WriteTemp(t, b.Name()+".zip", testenv.TruncateZip(data, zr+10))
		off, w := loadOK(t, p, OfflineOptions{})
		w.has(t, "damaged zip")
		if len(off.State.Volumes) != 3 || len(off.State.Engines) != 4 || off.Logs["pvc-stuck"].Count != 3 {
			t.Errorf("%d volumes, %d engines, logs %+v", len(off.State.Volumes), len(off.State.Engines), off.Logs)
		}
	})
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"cut inside the first header", testenv.TruncateZip(data, 20)},
		{"not a zip at all", []byte("this is a text file, not a bundle\n")},
		{"empty file", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testenv.WriteTemp(t, "bundle.zip", tc.data)
			_, err := LoadBundle(context.Background(), p, OfflineOptions{})
			if err == nil || !strings.Contains(err.Error(), "bundle.zip: neither a readable zip nor a folder") {
				t.Errorf("err = %v", err)
			}
		})
	}
}

// A damaged entry in an intact zip is reported by name; the rest is read.
func TestLoadBundleCorruptEntry(t *testing.T) {
	b := fxBundle()
	data, _ := zipYAMLsFirst(t, b)
	engines := b.Name() + "/yamls/namespaced/longhorn-system/longhorn.io/v1beta2/engines.yaml"
	off, err := testenv.ZipOffset(data, engines)
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), data...)
	for i := off + 30; i < off+60; i++ {
		bad[i] ^= 0x5a
	}
	p := testenv.WriteTemp(t, b.Name()+".zip", bad)
	o, w := loadOK(t, p, OfflineOptions{})
	w.has(t, "engines.yaml")
	if len(o.State.Volumes) != 3 || len(o.State.Replicas) != 4 || o.OrphansUnreliable == "" || o.Logs["pvc-stuck"].Count != 3 {
		t.Errorf("%d volumes, %d replicas, orphans %q, logs %+v", len(o.State.Volumes), len(o.State.Replicas), o.OrphansUnreliable, o.Logs)
	}
}

// YAML that does not parse is reported with the file and the item; the
// other items and files are read.
func TestLoadBundleUnparsableYAML(t *testing.T) {
	b := fxBundle()
	dir, err := b.WriteDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel := "yamls/namespaced/longhorn-system/longhorn.io/v1beta2/engines.yaml"
	p := filepath.Join(dir, filepath.FromSlash(rel))
	y, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// break the second entry
	first := bytes.Index(y, []byte("\n- apiVersion"))
	i := bytes.Index(y[first+1:], []byte("\n- apiVersion")) + first + 1
	j := bytes.Index(y[i+1:], []byte("\n- apiVersion")) + i + 1
	broken := append(append(append([]byte(nil), y[:i+1]...), []byte("- apiVersion: [unclosed\n  kind: : Engine")...), y[j:]...)
	if err := os.WriteFile(p, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	// and a settings file that is not YAML at all
	sp := filepath.Join(dir, "yamls/namespaced/longhorn-system/longhorn.io/v1beta2/settings.yaml")
	if err := os.WriteFile(sp, []byte("\x00\x01: : [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	off, w := loadOK(t, dir, OfflineOptions{})
	w.has(t, rel, "item 2", "YAML does not parse")
	w.has(t, "settings.yaml", "does not parse")
	w.has(t, "Longhorn version unknown")
	if len(off.State.Engines) != 3 || len(off.State.Volumes) != 3 || off.OrphansUnreliable == "" {
		t.Errorf("%d engines (want the 3 good ones), %d volumes, orphans %q", len(off.State.Engines), len(off.State.Volumes), off.OrphansUnreliable)
	}
}

func TestLoadBundleMissingFiles(t *testing.T) {
	b := &testenv.Bundle{CreatedAt: fxCreated}
	for _, o := range fxObjects(fxNS, "v1.4.3") {
		if o["kind"] != "Setting" {
			b.Objects = append(b.Objects, o)
		}
	}
	p := b.ZipPath(t, t.TempDir())
	off, w := loadOK(t, p, OfflineOptions{})
	w.has(t, "no settings.yaml")
	w.has(t, "Longhorn version unknown")
	w.has(t, "no longhorn-manager logs")
	if off.State.Version.Known() || off.LogsRead || len(off.State.Volumes) != 3 {
		t.Errorf("version %s, logs read %t, %d volumes", off.State.Version, off.LogsRead, len(off.State.Volumes))
	}

	// no volumes.yaml: nothing to classify, said once
	b = &testenv.Bundle{CreatedAt: fxCreated, Objects: []map[string]any{fxSetting(fxNS, longhorn.VersionSetting, "v1.5.1")}}
	p = b.ZipPath(t, t.TempDir())
	off, w = loadOK(t, p, OfflineOptions{})
	w.has(t, "no Longhorn volumes")
	if len(off.State.Volumes) != 0 || off.State.Version.String() != "v1.5.1" {
		t.Errorf("%d volumes, version %s", len(off.State.Volumes), off.State.Version)
	}
}

func TestLoadBundleTime(t *testing.T) {
	when := time.Date(2023, 9, 1, 10, 11, 12, 0, time.UTC)
	t.Run("metadata", func(t *testing.T) {
		b := &testenv.Bundle{CreatedAt: when, Objects: fxObjects(fxNS, "v1.4.3"), NoTimeInName: true}
		p, _ := b.WriteDir(t.TempDir())
		off, _ := loadOK(t, p, OfflineOptions{})
		if !off.State.Now.Equal(when) {
			t.Errorf("now %s, want %s", off.State.Now, when)
		}
	})
	t.Run("name", func(t *testing.T) {
		b := &testenv.Bundle{CreatedAt: when, Objects: fxObjects(fxNS, "v1.4.3"), NoMetadata: true}
		p, _ := b.WriteZip(t.TempDir())
		off, w := loadOK(t, p, OfflineOptions{})
		if !off.State.Now.Equal(when) || strings.Contains(w.String(), "creation time") {
			t.Errorf("now %s, want %s; warnings %s", off.State.Now, when, w)
		}
	})
	t.Run("file time, with a warning", func(t *testing.T) {
		b := &testenv.Bundle{Objects: fxObjects(fxNS, "v1.4.3"), NoMetadata: true, NoTimeInName: true}
		p, _ := b.WriteZip(t.TempDir())
		mod := time.Date(2022, 2, 2, 2, 2, 2, 0, time.UTC)
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		off, w := loadOK(t, p, OfflineOptions{})
		w.has(t, "creation time is unknown", "2022-02-02T02:02:02Z")
		if !off.State.Now.Equal(mod) {
			t.Errorf("now %s, want %s", off.State.Now, mod)
		}
	})
}

func TestLoadBundleNotABundle(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "engines.yaml"), []byte("kind: Engine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadBundle(context.Background(), dir, OfflineOptions{}); err == nil || !strings.Contains(err.Error(), "use -f") {
		t.Errorf("plain folder: err = %v", err)
	}
	b := fxBundle()
	b.ZipPath(t, dir)
	if _, err := LoadBundle(context.Background(), dir, OfflineOptions{}); err == nil || !strings.Contains(err.Error(), "pass the bundle zip itself") {
		t.Errorf("folder holding the zip: err = %v", err)
	}
	if _, err := LoadBundle(context.Background(), filepath.Join(dir, "missing.zip"), OfflineOptions{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: err = %v", err)
	}
	// Longhorn 1.2: only v1beta1
	old := &testenv.Bundle{CreatedAt: fxCreated}
	for _, o := range fxObjects(fxNS, "v1.2.6") {
		c := map[string]any{}
		for k, v := range o {
			c[k] = v
		}
		c["apiVersion"] = "longhorn.io/v1beta1"
		old.Objects = append(old.Objects, c)
	}
	p := old.ZipPath(t, t.TempDir())
	if _, err := LoadBundle(context.Background(), p, OfflineOptions{}); err == nil || !strings.Contains(err.Error(), "before 1.3") {
		t.Errorf("v1beta1 bundle: err = %v", err)
	}
}

func TestLoadBundleSelection(t *testing.T) {
	b := fxBundle()
	p := b.ZipPath(t, t.TempDir())
	off, _ := loadOK(t, p, OfflineOptions{Volumes: []string{"pvc-stuck"}})
	if len(off.State.Volumes) != 1 || len(off.State.Engines) != 2 || len(off.State.Replicas) != 2 {
		t.Errorf("selection kept %s", summary(off.State))
	}
	var nf *NotFoundError
	if _, err := LoadBundle(context.Background(), p, OfflineOptions{Volumes: []string{"pvc-nope"}}); !errors.As(err, &nf) {
		t.Errorf("unknown volume: err = %v", err)
	}
	if _, err := LoadBundle(context.Background(), p, OfflineOptions{Selector: "a in ("}); err == nil || !strings.Contains(err.Error(), "invalid selector") {
		t.Errorf("bad selector: err = %v", err)
	}
	off, _ = loadOK(t, p, OfflineOptions{Selector: longhorn.VolumeLabel + "=pvc-ok"})
	if len(off.State.Volumes) != 1 || off.State.Volumes[0].Name != "pvc-ok" || len(off.State.Engines) != 1 {
		t.Errorf("selector kept %s", summary(off.State))
	}
}

// The Longhorn 1.3 layout: top-level sequences with lower-cased Go field
// names, read through the mapping, with a warning that says so.
func TestLoadBundle13Layout(t *testing.T) {
	path := filepath.Join("testdata", "longhorn-support-bundle_6a1c9e2f_2022-08-01T09-30-00Z")
	off, w := loadOK(t, path, OfflineOptions{})
	w.has(t, "Longhorn 1.3 bundle layout")
	st := off.State
	if st.Namespace != "longhorn-system" || st.Version.String() != "v1.3.2" || !st.Now.Equal(time.Date(2022, 8, 1, 9, 30, 0, 0, time.UTC)) {
		t.Errorf("namespace %q version %s now %s", st.Namespace, st.Version, st.Now)
	}
	want := strings.Join([]string{
		`engine pvc-13-e-3f9a1c7d vol=pvc-13 node="node-a" active=true state=running rw=1 deleting=false`,
		`engine pvc-13-e-8b2e4f60 vol=pvc-13 node="node-b" active=true state=running rw=1 deleting=false`,
		`replica pvc-13-r-a1b2c3d4 engine=pvc-13-e-3f9a1c7d active=true`,
		`replica pvc-13-r-e5f6a7b8 engine=pvc-13-e-8b2e4f60 active=false`,
		`volume pvc-13 node="node-b" current="node-b" migration="" cmn="" state=attached`,
		`volume pvc-quiet node="" current="" migration="" cmn="" state=detached`,
	}, "\n")
	if got := summary(st); got != want {
		t.Errorf("state:\n%s\nwant:\n%s", got, want)
	}
	for _, e := range st.Engines {
		if e.CreationTimestamp.IsZero() || e.Status.Endpoint != "/dev/longhorn/pvc-13" || e.Status.OwnerID == "" || e.Labels[longhorn.VolumeLabel] != "pvc-13" {
			t.Errorf("engine %s: created %s endpoint %q owner %q labels %v", e.Name, e.CreationTimestamp, e.Status.Endpoint, e.Status.OwnerID, e.Labels)
		}
	}
	if v := st.Volumes[0]; !v.Spec.Migratable || v.Spec.AccessMode != "rwx" || v.Status.Robustness != "healthy" || v.Spec.EngineImage != v.Status.CurrentImage {
		t.Errorf("volume %+v", v)
	}
	if ev := off.Logs["pvc-13"]; ev.Count != 2 || !ev.LastSeen.Equal(time.Date(2022, 8, 1, 9, 29, 0, 0, time.UTC)) {
		t.Errorf("log evidence %+v", ev)
	}
}

// Whatever point a download stops at, the read either fails or says it is
// incomplete: a cut bundle never passes for a healthy, complete one.
func TestLoadBundleEveryCutIsIncomplete(t *testing.T) {
	b := fxBundle()
	data, _ := zipYAMLsFirst(t, b)
	// Up to the table of contents: a cut inside it loses no file.
	zr := bytes.Index(data, []byte("PK\x01\x02"))
	for n := 0; n < zr; n += 61 {
		off, err := loadBundle(context.Background(), mustOpenZip(t, testenv.TruncateZip(data, n)), bundleInfo{path: "cut.zip"}, OfflineOptions{})
		if err == nil && len(off.Incomplete) == 0 {
			t.Fatalf("cut at byte %d of %d: read looks complete (%d volumes)", n, len(data), len(off.State.Volumes))
		}
	}
}

func mustOpenZip(t *testing.T, data []byte) bundleFS {
	t.Helper()
	fsys, err := openZip(bytes.NewReader(data), int64(len(data)), nil, "cut.zip", func(string, ...any) {})
	if err != nil {
		return &zipBundle{entries: map[string]*zip.File{}}
	}
	return fsys
}

// A real zip bomb, an entry that inflates far beyond what it declares: the
// inflation stops at the limit and the file counts as not read.
func TestLoadBundleZipBombStopsAtLimit(t *testing.T) {
	b := fxBundle()
	files, err := b.Files()
	if err != nil {
		t.Fatal(err)
	}
	bomb := b.Name() + "/logs/longhorn-system/longhorn-manager-bomb/longhorn-manager.log"
	files[bomb] = bytes.Repeat([]byte("A"), 8<<20)
	data, err := testenv.Zip(files)
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.WriteTemp(t, "bomb.zip", data)
	var warns []string
	off, err := LoadBundle(context.Background(), p, OfflineOptions{MaxFileBytes: 1 << 20, Warnf: func(f string, a ...any) { warns = append(warns, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(off.Incomplete) != 1 || !strings.Contains(off.Incomplete[0], "longhorn-manager-bomb") || !strings.Contains(strings.Join(warns, "\n"), "zip bomb") {
		t.Errorf("incomplete %q\nwarnings %q", off.Incomplete, warns)
	}
}
