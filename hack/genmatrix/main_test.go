package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The page's table follows the record: -check fails while they differ,
// writing fixes it, and the releases come oldest first.
func TestRenderAndCheck(t *testing.T) {
	dir := t.TempDir()
	record, page := filepath.Join(dir, "matrix.json"), filepath.Join(dir, "page.md")
	if err := os.WriteFile(record, []byte(`{"v1.10.0":{"TestA":{"real":"pass","lhsim":"fail"}},"v1.4.3":{"TestA":{"real":"pass"},"TestB":{"real":"pass"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, []byte("intro\n"+begin+"stale\n"+end+"outro\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(record, page, true); err == nil {
		t.Fatal("-check passed on a stale table")
	}
	if err := run(record, page, false); err != nil {
		t.Fatal(err)
	}
	if err := run(record, page, true); err != nil {
		t.Fatalf("-check after writing: %v", err)
	}
	data, _ := os.ReadFile(page)
	got := string(data)
	for _, want := range []string{
		"| test / scenario | v1.4.3 | v1.10.0 |",
		"| TestA | real ✓ | real ✓, lhsim ✗ fail |",
		"| TestB | real ✓ | – |",
		"intro\n", "outro\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
}
