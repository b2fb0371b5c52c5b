package readstate

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// names decodes input and returns "kind/name" of every object in order, and
// the parse problems.
func names(t *testing.T, input string) ([]string, *problems) {
	t.Helper()
	var out []string
	probs := &problems{}
	err := decodeStream(strings.NewReader(input), probs, func(obj map[string]any) error {
		kind, _ := obj["kind"].(string)
		md, _ := obj["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		out = append(out, kind+"/"+name)
		return nil
	})
	if err != nil {
		t.Fatalf("decodeStream: %v", err)
	}
	return out, probs
}

const engineYAML = `apiVersion: longhorn.io/v1beta2
kind: Engine
metadata:
  name: %s
  namespace: longhorn-system
spec:
  active: true
  nodeID: node-a
  volumeName: vol
`

func TestDecodeShapes(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"single YAML object", fmt.Sprintf(engineYAML, "e1"), []string{"Engine/e1"}},
		{"kit List, sequence at column 0", `apiVersion: v1
items:
- apiVersion: longhorn.io/v1beta2
  kind: Engine
  metadata:
    name: e1
  spec:
    replicaModeMap:
      r1: RW
- apiVersion: longhorn.io/v1beta2
  kind: Volume
  metadata:
    name: v1
kind: List
metadata:
  resourceVersion: "null"
`, []string{"Engine/e1", "Volume/v1"}},
		{"List with an indented sequence", `kind: List
apiVersion: v1
items:
  - kind: Engine
    metadata:
      name: e1
  # a comment between entries
  - kind: Engine
    metadata:
      name: e2
metadata: {}
`, []string{"Engine/e1", "Engine/e2"}},
		{"empty List", "apiVersion: v1\nitems: []\nkind: List\n", nil},
		{"multi-document YAML", "---\n" + fmt.Sprintf(engineYAML, "e1") + "---\n" + fmt.Sprintf(engineYAML, "e2") + "...\n", []string{"Engine/e1", "Engine/e2"}},
		{"separator with comment, CRLF", strings.ReplaceAll(fmt.Sprintf(engineYAML, "e1")+"--- # next\n"+fmt.Sprintf(engineYAML, "e2"), "\n", "\r\n"), []string{"Engine/e1", "Engine/e2"}},
		{"top-level sequence (1.3 files)", "- kind: Engine\n  metadata:\n    name: e1\n- kind: Engine\n  metadata:\n    name: e2\n", []string{"Engine/e1", "Engine/e2"}},
		{"block scalar and multi-line string inside an item", `items:
- kind: Engine
  metadata:
    name: e1
    annotations:
      note: |
        items:
        - not an entry
      other: "a long
        string"
- kind: Engine
  metadata:
    name: e2
kind: List
`, []string{"Engine/e1", "Engine/e2"}},
		{"JSON object", `{"kind":"Engine","metadata":{"name":"e1"}}`, []string{"Engine/e1"}},
		{"JSON List, items streamed", `{"apiVersion":"v1","items":[{"kind":"Engine","metadata":{"name":"e1"}},{"kind":"Volume","metadata":{"name":"v1"}}],"kind":"List","metadata":{}}`, []string{"Engine/e1", "Volume/v1"}},
		{"JSON List, items before kind", `{"items":[{"kind":"Engine","metadata":{"name":"e1"}}],"kind":"EngineList"}`, []string{"Engine/e1"}},
		{"JSON stream (kubectl get -w -o json)", `{"kind":"Engine","metadata":{"name":"e1"}}
{"kind":"Engine","metadata":{"name":"e2"}}`, []string{"Engine/e1", "Engine/e2"}},
		{"JSON array with a List inside", `[{"kind":"Engine","metadata":{"name":"e1"}},{"kind":"List","items":[{"kind":"Volume","metadata":{"name":"v1"}}]}]`, []string{"Engine/e1", "Volume/v1"}},
		{"JSON object whose items is not a list", `{"kind":"Thing","items":{"a":1},"metadata":{"name":"x"}}`, []string{"Thing/x"}},
		{"BOM and leading blank lines", "\ufeff\n\n" + fmt.Sprintf(engineYAML, "e1"), []string{"Engine/e1"}},
		{"empty input", "", nil},
		{"only comments", "# nothing\n---\n# still nothing\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, probs := names(t, tt.input)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("objects = %v, want %v", got, tt.want)
			}
			if probs.total != 0 {
				t.Errorf("unexpected problems: %v", probs.first)
			}
		})
	}
}

// A broken part costs that part only: the other items and documents are
// still read, and the problem says where it was.
func TestDecodeKeepsGoingAfterBrokenParts(t *testing.T) {
	tests := []struct {
		name     string
		input    string
		want     []string
		problems int
		where    string
	}{
		{"broken List item", `apiVersion: v1
items:
- kind: Engine
  metadata:
    name: e1
- kind: Engine
  metadata: {name: [unclosed
- kind: Engine
  metadata:
    name: e3
kind: List
`, []string{"Engine/e1", "Engine/e3"}, 1, "document 1 item 2"},
		{"broken document", fmt.Sprintf(engineYAML, "e1") + "---\nkind: Engine\n  metadata: : :\n---\n" + fmt.Sprintf(engineYAML, "e3"), []string{"Engine/e1", "Engine/e3"}, 1, "document 2"},
		{"scalar document", "just a string\n---\n" + fmt.Sprintf(engineYAML, "e2"), []string{"Engine/e2"}, 1, "document 1: not an object"},
		{"JSON cut short", `{"kind":"Engine","metadata":{"name":"e1"}} {"kind":"Engine","metadata":{"na`, []string{"Engine/e1"}, 1, "JSON does not parse"},
		{"JSON syntax error", `{"kind":"Engine","metadata":{"name":"e1"}} {"kind" "Engine"}`, []string{"Engine/e1"}, 1, "JSON does not parse"},
		{"JSON top-level scalar", `[1, {"kind":"Engine","metadata":{"name":"e1"}}]`, []string{"Engine/e1"}, 1, "not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, probs := names(t, tt.input)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("objects = %v, want %v", got, tt.want)
			}
			if probs.total != tt.problems || !strings.Contains(probs.summary(), tt.where) {
				t.Errorf("problems = %d %q, want %d mentioning %q", probs.total, probs.summary(), tt.problems, tt.where)
			}
		})
	}
}

// A read error (a truncated archive entry) is returned as such, not taken
// for a parse problem, and the objects before it were handed over.
func TestDecodeReadError(t *testing.T) {
	boom := errors.New("flate: corrupt input")
	for _, tt := range []struct{ name, input string }{
		{"YAML", "items:\n- kind: Engine\n  metadata:\n    name: e1\n- kind: Engine\n  metadata:\n    name: e2\n"},
		{"JSON", `{"items":[{"kind":"Engine","metadata":{"name":"e1"}},{"kind":"Engine","metadata":{"name":"e2"}}]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cut := strings.Index(tt.input, "e2")
			r := io.MultiReader(strings.NewReader(tt.input[:cut]), iotest.ErrReader(boom))
			var got []string
			probs := &problems{}
			err := decodeStream(r, probs, func(obj map[string]any) error {
				got = append(got, obj["metadata"].(map[string]any)["name"].(string))
				return nil
			})
			if !errors.Is(err, boom) {
				t.Errorf("err = %v, want the read error", err)
			}
			if tt.name == "YAML" && !reflect.DeepEqual(got, []string{"e1"}) {
				t.Errorf("objects before the error = %v, want [e1]", got)
			}
			if probs.total != 0 {
				t.Errorf("a read error counted as a parse problem: %v", probs.first)
			}
		})
	}
}

// emit's error stops the read and comes back unchanged.
func TestDecodeEmitErrorStops(t *testing.T) {
	stop := errors.New("stop")
	for _, input := range []string{
		"items:\n- kind: A\n- kind: B\n",
		`{"items":[{"kind":"A"},{"kind":"B"}]}`,
		`[{"kind":"A"},{"kind":"B"}]`,
	} {
		n := 0
		err := decodeStream(strings.NewReader(input), &problems{}, func(map[string]any) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("%q: err=%v after %d objects, want stop after 1", input, err, n)
		}
	}
}

// Integers stay exact (no float64 detour) and YAML 1.1 scalars read as
// kubectl reads them.
func TestDecodeScalars(t *testing.T) {
	var got map[string]any
	err := decodeStream(strings.NewReader("kind: Engine\nmetadata:\n  name: e\n  generation: 9007199254740993\nspec:\n  nodeID: \"n\"\n  active: true\n"), &problems{}, func(m map[string]any) error {
		got = m
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	md := got["metadata"].(map[string]any)
	if fmt.Sprint(md["generation"]) != "9007199254740993" {
		t.Errorf("generation = %v", md["generation"])
	}
	spec := got["spec"].(map[string]any)
	if spec["nodeID"] != "n" || spec["active"] != true {
		t.Errorf("spec = %v", spec)
	}
}

// Problems are capped in memory but counted in full.
func TestProblemsSummary(t *testing.T) {
	var p problems
	if p.summary() != "" {
		t.Error("empty problems have a summary")
	}
	p.add("first %d", 1)
	if p.summary() != "first 1" {
		t.Errorf("summary = %q", p.summary())
	}
	for i := 0; i < 20; i++ {
		p.add("more")
	}
	if len(p.first) != maxProblems || p.total != 21 || !strings.HasPrefix(p.summary(), "21 parts could not be read (first: first 1)") {
		t.Errorf("kept %d, total %d, summary %q", len(p.first), p.total, p.summary())
	}
}

// An oversized document or entry is skipped, not held in memory; the rest
// is read.
func TestDecodeSkipsOversizedParts(t *testing.T) {
	defer func(old int) { maxChunk = old }(maxChunk)
	maxChunk = 1024
	big := strings.Repeat("x", 4000)
	input := "items:\n- kind: Engine\n  metadata:\n    name: e1\n- kind: Engine\n  metadata:\n    name: e2\n    annotations:\n      a: " + big + "\n      b: c\n- kind: Engine\n  metadata:\n    name: e3\nkind: List\n" +
		"---\nkind: Engine\nmetadata:\n  name: e4\n  annotations:\n    a: " + big + "\n---\n" + fmt.Sprintf(engineYAML, "e5")
	got, probs := names(t, input)
	if want := []string{"Engine/e1", "Engine/e3", "Engine/e5"}; !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
	if probs.total != 2 || !strings.Contains(probs.first[0], "document 1 item 2: larger than") || !strings.Contains(probs.first[1], "document 2: larger than") {
		t.Errorf("problems = %v", probs.first)
	}
}
