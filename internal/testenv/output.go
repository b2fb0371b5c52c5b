package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// Checks on what a command printed and wrote.

// Contains fails the test (without stopping it) for each sub that text,
// called what in the message, lacks, and then logs text once.
func Contains(t testing.TB, what, text string, subs ...string) {
	t.Helper()
	missing := false
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s does not contain %q", what, s)
			missing = true
		}
	}
	if missing {
		t.Logf("%s:\n%s", what, text)
	}
}

// ReadFile returns a file the command wrote (a backup, its action log), or
// fails the test.
func ReadFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// NoFile fails the test if path exists: nothing should have been written.
func NoFile(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		entries, _ := filepath.Glob(filepath.Join(path, "*"))
		t.Errorf("%s exists (%v): nothing should have been written", path, entries)
	}
}

// WriteTemp writes data to a file name in a new temporary folder of the
// test (an input for -f or --bundle) and returns its path, or fails the
// test.
func WriteTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// DecodeReport decodes a report a command printed with -o json into T,
// after checking its apiVersion (cmdutil.ReportAPIVersion) and kind, or
// fails the test.
func DecodeReport[T any](t testing.TB, out, kind string) *T {
	t.Helper()
	var head cmdutil.ReportMeta
	r := new(T)
	if err := json.Unmarshal([]byte(out), &head); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	if want := cmdutil.NewReportMeta(kind); head != want {
		t.Fatalf("report header %s/%s, want %s/%s", head.APIVersion, head.Kind, want.APIVersion, want.Kind)
	}
	if err := json.Unmarshal([]byte(out), r); err != nil {
		t.Fatalf("-o json is not a %s: %v\n%s", kind, err, out)
	}
	return r
}
