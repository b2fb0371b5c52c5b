package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"pvc-1234":                 "pvc-1234",
		"vm \"db\" (ok)":           "vm \"db\" (ok)",
		"x\x1b]0;owned\x07y":       `x\u001b]0;owned\u0007y`,
		"a\x1b[2Jb":                `a\u001b[2Jb`,
		"line\nnext\tcol\rback":    `line\nnext\tcol\rback`,
		"c1 \u009b2J":              `c1 \u009b2J`,
		"raw \x9b byte":            `raw \x9b byte`,
		`C:\path` + "\x1b":         `C:\\path\u001b`,
		"zero\u200bwidth":          `zero\u200bwidth`,
		"bidi \u202eevil":          `bidi \u202eevil`,
		"ünïcödé 日本":               "ünïcödé 日本",
		`only \ backslash`:         `only \ backslash`,
		"emoji \U0001F600 fine":    "emoji \U0001F600 fine",
		"private \U000F0000 plane": `private \U000f0000 plane`,
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
		if !Printable(Escape(in)) {
			t.Errorf("Escape(%q) = %q is not printable", in, Escape(in))
		}
	}
}

// What All reaches: exported fields through pointers, slices, arrays, maps
// (keys and values) and interfaces; unexported fields and non-text slices
// are left alone.
func TestAll(t *testing.T) {
	type inner struct {
		Name string
		Tags map[string]string
	}
	type outer struct {
		Title  string
		In     *inner
		List   []inner
		Arr    [2]string
		ByName map[string]inner
		Any    any
		Bytes  []byte
		hidden string
	}
	esc := "a\x1bb"
	o := &outer{
		Title:  esc,
		In:     &inner{Name: esc, Tags: map[string]string{esc: esc}},
		List:   []inner{{Name: esc}},
		Arr:    [2]string{esc, "ok"},
		ByName: map[string]inner{esc: {Name: esc}},
		Any:    esc,
		Bytes:  []byte(esc),
		hidden: esc,
	}
	if n := len(NotPrintable(o)); n != 9 {
		t.Errorf("before: %d strings not printable, want 9", n)
	}
	All(o)
	if bad := NotPrintable(o); len(bad) != 0 {
		t.Errorf("after All: %q", bad)
	}
	want := `a\u001bb`
	if o.Title != want || o.In.Name != want || o.In.Tags[want] != want || o.List[0].Name != want || o.Arr[0] != want ||
		o.ByName[want].Name != want || o.Any != want || o.Arr[1] != "ok" {
		t.Errorf("after All: %+v", o)
	}
	if string(o.Bytes) != esc || o.hidden != esc {
		t.Errorf("bytes and unexported fields changed: %q %q", o.Bytes, o.hidden)
	}
}

// FuzzEscape: whatever the input, the output is printable, safe text comes
// back unchanged, and two different unsafe inputs never print the same.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "pvc", "\x1b[31mred", "\xff\xfe", `\u001b`, "\\\x1b", "\u009b"} {
		f.Add(s, "\x1b")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := Escape(a), Escape(b)
		if !Printable(ea) || strings.ContainsRune(ea, utf8.RuneError) && !strings.ContainsRune(a, utf8.RuneError) {
			t.Fatalf("Escape(%q) = %q", a, ea)
		}
		if Safe(a) != (ea == a) {
			t.Fatalf("Safe(%q)=%t but Escape gives %q", a, Safe(a), ea)
		}
		if a != b && ea == eb && !Safe(a) && !Safe(b) {
			t.Fatalf("%q and %q both print as %q", a, b, ea)
		}
	})
}
