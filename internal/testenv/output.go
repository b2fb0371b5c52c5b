package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Checks on what a command printed and wrote.

// Contains fails the test (without stopping it) for each sub that text,
// called what in the message, lacks.
func Contains(t testing.TB, what, text string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(text, s) {
			t.Errorf("%s does not contain %q", what, s)
		}
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
