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
	record, page := filepath.Join(dir, "matrix"), filepath.Join(dir, "page.md")
	if err := os.Mkdir(record, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run(record, page, true); err == nil || !strings.Contains(err.Error(), "no record") {
		t.Fatalf("-check without a record: %v", err)
	}
	for name, data := range map[string]string{
		"realtest.json": `{"v1.10.0":{"TestA":{"real":"pass","lhsim":"fail"}},"v1.4.3":{"TestA":{"real":"pass"},"TestB":{"real":"pass"}}}`,
		"fix.json":      `{"v1.3.3":{"TestFix/engine-write":{"lhsim":"pass"}}}`,
	} {
		if err := os.WriteFile(filepath.Join(record, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
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
		"| test / scenario | v1.3.3 | v1.4.3 | v1.10.0 |",
		"| TestA | – | real ✓ | real ✓, lhsim ✗ fail |",
		"| TestB | – | real ✓ | – |",
		"| TestFix/engine-write | lhsim ✓ | – | – |",
		"intro\n", "outro\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
}
