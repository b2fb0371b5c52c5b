package safetext

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
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

// Cut never splits a character; Lines keeps a message's line breaks and
// escapes the rest.
func TestCutAndLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 5, "abc"}, {"abcdef", 3, "abc"}, {"aé", 2, "a"}, {"日本", 4, "日"}, {"日本", 2, ""},
	} {
		if got := Cut(c.in, c.n); got != c.want || !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	if got, want := Lines("one\ntwo \x1b[2J"), `one`+"\n"+`two \u001b[2J`; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	if got := Lines("plain\nlines"); got != "plain\nlines" {
		t.Errorf("Lines changed printable text: %q", got)
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
		if Printable(a) != (ea == a) {
			t.Fatalf("Printable(%q)=%t but Escape gives %q", a, Printable(a), ea)
		}
		if a != b && ea == eb && !Printable(a) && !Printable(b) {
			t.Fatalf("%q and %q both print as %q", a, b, ea)
		}
	})
}

// BenchmarkAll: the walk over a read of 10,000 volumes with an engine and
// three replicas each, all text already printable (the usual case: it only
// reads). Compare with BenchmarkScan's scan of the same size (make bench).
func BenchmarkAll(b *testing.B) {
	st := &longhorn.State{Namespace: "longhorn-system"}
	for i := range 10000 {
		name := fmt.Sprintf("pvc-%08d", i)
		labels := map[string]string{longhorn.VolumeLabel: name, "recurring-job-group.longhorn.io/default": "enabled"}
		var v longhorn.Volume
		v.Name, v.Namespace, v.Labels = name, st.Namespace, labels
		v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.State = "node-a", "node-a", longhorn.VolumeStateAttached
		st.Volumes = append(st.Volumes, v)
		var e longhorn.Engine
		e.Name, e.Labels = name+"-e-0", labels
		e.Spec.ReplicaAddressMap = map[string]string{}
		for r := range 3 {
			var rp longhorn.Replica
			rp.Name, rp.Labels = fmt.Sprintf("%s-r-%d", name, r), labels
			rp.Spec.EngineName, rp.Spec.DataDirectoryName = e.Name, fmt.Sprintf("%s-%d", name, r)
			e.Spec.ReplicaAddressMap[rp.Name] = "10.0.0.1:10000"
			st.Replicas = append(st.Replicas, rp)
		}
		st.Engines = append(st.Engines, e)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		All(st)
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"one":                   "one",
		"a\n  b  \n\nc\n":       "a; b; c",
		"":                      "",
		"volume v:\n  engine e": "volume v:; engine e",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
