package readstate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// The parsers take files from users' clusters: whatever the bytes, they
// must not panic or hang, and what they return must hang together. Run
// bounded, e.g.:
//
//	go test -run='^$' -fuzz=FuzzFilesParse -fuzztime=20s -fuzzminimizetime=20x ./pkg/readstate
//	go test -run='^$' -fuzz=FuzzBundleParse -fuzztime=20s -fuzzminimizetime=20x ./pkg/readstate
//	go test -run='^$' -fuzz=FuzzLogLine -fuzztime=20s -fuzzminimizetime=20x ./pkg/readstate
//
// -fuzzminimizetime bounds the shrinking of each new interesting input:
// with the default (60s) a worker shrinks a 10 KB bundle for a minute and
// reports no executions meanwhile. Without -fuzz, the seeds run as ordinary
// tests.

func FuzzFilesParse(f *testing.F) {
	objs := fxObjects(fxNS, "v1.4.3")
	kit, err := testenv.ListYAML(longhorn.APIVersion, "Engine", objs[5:7], true)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(kit)
	f.Add([]byte(toYAML(f, kubectlList(objs))))
	f.Add([]byte(toJSON(f, kubectlList(objs[:4]))))
	f.Add([]byte(fmt.Sprintf(engineYAML, "e1") + "---\n" + fmt.Sprintf(engineYAML, "e2")))
	f.Add([]byte(`{"kind":"Engine","metadata":{"name":"e1"}} [{"kind":"List","items":[{"kind":"Volume"}]}]`))
	f.Add([]byte("- kind: Engine\n  metadata:\n    name: e\n  spec: {nodeID: \"null\"}\n"))
	f.Add([]byte("items:\n  - a\n  -\n- b: [\n"))
	if data, err := os.ReadFile(filepath.Join("testdata", "longhorn-support-bundle_6a1c9e2f_2022-08-01T09-30-00Z", "yamls", "longhorn", "engines.yaml")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newCollector()
		var probs problems
		emitted := 0
		err := decodeStream(bytes.NewReader(data), &probs, func(obj map[string]any) error {
			if obj == nil {
				t.Fatal("nil object emitted")
			}
			emitted++
			_ = c.add(obj, "", "")
			// the 1.3 path sees the same inputs in bundles
			if m, ok := translate13(normalizeNull(obj)).(map[string]any); ok {
				_ = newCollector().add(m, "Engine", "ns")
			}
			return nil
		})
		if err != nil {
			t.Fatalf("a bytes.Reader cannot fail, got %v", err)
		}
		if c.objects > emitted || probs.total < len(probs.first) || len(probs.first) > maxProblems {
			t.Fatalf("objects %d > emitted %d, or problems %d/%d", c.objects, emitted, probs.total, len(probs.first))
		}
		if probs.total > 0 && probs.summary() == "" {
			t.Fatal("problems without a summary")
		}
		for _, s := range c.spaces {
			for _, e := range s.st.Engines {
				if e.Name == "" {
					t.Fatal("engine without a name accepted")
				}
			}
			for _, v := range s.st.Volumes {
				if v.Name == "" {
					t.Fatal("volume without a name accepted")
				}
			}
		}
	})
}

// FuzzBundleParse feeds arbitrary bytes as a bundle zip: the central
// directory reader, the salvage walk of truncated zips, the layout and the
// loaders behind them.
func FuzzBundleParse(f *testing.F) {
	b := fxBundle()
	b.Objects = append(b.Objects, fxObjects("lh-2", "v1.5.1")[:3]...)
	data := b.ZipData(f)
	f.Add(data)
	for _, n := range []int{len(data) / 2, len(data) - 30, 200} {
		f.Add(testenv.TruncateZip(data, n))
	}
	small, err := testenv.Zip(map[string][]byte{
		"b/yamls/namespaced/longhorn-system/longhorn.io/v1beta2/volumes.yaml": []byte(toYAML(f, kubectlList(fxObjects(fxNS, "v1.4.3")[2:3]))),
		"b/logs/longhorn-system/longhorn-manager-x/longhorn-manager.log":      []byte(testenv.BugLine(testenv.Style151, fxCreated, fxNS, "pvc-stuck", "pvc-stuck-e-1", "pvc-stuck-e-0", "n") + "\n"),
		"b/yamls/longhorn/engines.yaml":                                       []byte("- objectmeta: {name: e, namespace: longhorn-system}\n  spec: {instancespec: {volumename: v}}\n"),
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(small)
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		warn := func(string, ...any) {}
		fsys, err := openZip(bytes.NewReader(data), int64(len(data)), nil, "fuzz.zip", warn)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.zip") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, n := range fsys.files() {
			// ".." inside a name ("longhorn..io") is a name; only a ".."
			// element would climb out
			if n == "" || strings.HasPrefix(n, "/") || slices.Contains(strings.Split(n, "/"), "..") {
				t.Fatalf("unclean entry name %q", n)
			}
		}
		for _, ns := range []string{"", "lh-2"} {
			off, err := loadBundle(ctx, fsys, bundleInfo{path: "fuzz.zip"}, OfflineOptions{Namespace: ns, Warnf: warn})
			if err != nil {
				continue
			}
			// Nothing read reaches a terminal raw (safetext.All).
			if bad := safetext.NotPrintable(off); len(bad) > 0 {
				t.Fatalf("text read from the bundle is not escaped: %q", bad)
			}
			// An incomplete read must say so (the commands exit 2 on it),
			// never pass for a complete one.
			if d := damageOf(fsys); d != "" && len(off.Incomplete) == 0 {
				t.Fatalf("zip damaged (%s) but the read looks complete", d)
			}
			hasVolumes := false
			for _, n := range fsys.files() {
				hasVolumes = hasVolumes || strings.HasSuffix(n, "/volumes.yaml")
			}
			if !hasVolumes && len(off.Incomplete) == 0 {
				t.Fatal("no volumes.yaml, but the read looks complete")
			}
			st := off.State
			if st.Namespace == "" || (ns != "" && st.Namespace != ns) || off.Source != "bundle:fuzz.zip" {
				t.Fatalf("namespace %q (asked %q), source %q", st.Namespace, ns, off.Source)
			}
			for vol, ev := range off.Logs {
				if vol == "" || ev.Count <= 0 || (!ev.FirstSeen.IsZero() && ev.LastSeen.Before(ev.FirstSeen)) {
					t.Fatalf("evidence %q %+v", vol, ev)
				}
			}
		}
	})
}

func FuzzLogLine(f *testing.F) {
	for _, style := range []string{testenv.Style143, testenv.Style151, testenv.Style152} {
		f.Add([]byte(testenv.BugLine(style, fxCreated, fxNS, "pvc-1", "pvc-1-e-1", "pvc-1-e-0", "node-b")))
	}
	f.Add([]byte(`{"error":"failed to sync a/b: BUG: found the second active engine b-e-1 besides b-e-0","time":"x"}`))
	f.Add([]byte("cannot find the current engine for the switching for volume "))
	f.Add([]byte("BUG: found the second active engine"))
	f.Add([]byte("BUG: found the second active engine x" + strings.Repeat("é", 300))) // a byte cut at 400 splits an é
	f.Fuzz(func(t *testing.T, line []byte) {
		h, ok := parseLogLine(line)
		if !ok {
			if h != (logHit{}) {
				t.Fatal("a miss returned data")
			}
			return
		}
		// cut by runes: a valid line gives a valid message
		if len(h.Message) > maxMessage || strings.ContainsAny(h.Message, "\"\n\r") || utf8.Valid(line) && !utf8.ValidString(h.Message) {
			t.Fatalf("message %q", h.Message)
		}
		if h.Volume != "" && (strings.ContainsAny(h.Volume, " /\",") || !utf8.ValidString(h.Volume)) {
			t.Fatalf("volume %q", h.Volume)
		}
		if !h.Time.IsZero() && h.Time.Location() != time.UTC {
			t.Fatalf("time not in UTC: %v", h.Time)
		}
	})
}
