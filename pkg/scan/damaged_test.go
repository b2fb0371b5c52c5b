package scan_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Damaged and hostile offline input. Whatever the damage, a check made on
// part of the input must never look complete: exit 2, one error line that
// says what is missing, and never the "No engine problems found" verdict.

const damagedDir = "yamls/namespaced/" + testenv.BundleNamespace + "/" + longhorn.Group + "/" + longhorn.APIVersionName + "/"

// damagedFiles is the scenario bundle's files, for a test to damage.
func damagedFiles(t *testing.T) (top string, files map[string][]byte) {
	t.Helper()
	b := offScenarioBundle()
	files, err := b.Files()
	if err != nil {
		t.Fatal(err)
	}
	return b.Name() + "/", files
}

func damagedZip(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	data, err := testenv.Zip(files)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// cutAtLine cuts text after the first line holding marker, at a line end, so
// the rest still parses: only the missing List trailer betrays the cut.
func cutAtLine(t *testing.T, text []byte, marker string) []byte {
	t.Helper()
	i := bytes.Index(text, []byte(marker))
	if i < 0 {
		t.Fatalf("%q not in the file", marker)
	}
	j := bytes.IndexByte(text[i:], '\n')
	return append([]byte(nil), text[:i+j+1]...)
}

// declareHuge rewrites an entry's uncompressed size in the central
// directory, as a zip bomb declares (or hides) its size.
func declareHuge(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	out := append([]byte(nil), data...)
	i := bytes.Index(out, []byte("PK\x01\x02"))
	for i >= 0 {
		nameLen := int(binary.LittleEndian.Uint16(out[i+28:]))
		if string(out[i+46:i+46+nameLen]) == name {
			binary.LittleEndian.PutUint32(out[i+24:], 0xFFFFFFF0) // ~4 GiB
			return out
		}
		next := bytes.Index(out[i+4:], []byte("PK\x01\x02"))
		if next < 0 {
			break
		}
		i += 4 + next
	}
	t.Fatalf("%s not in the central directory", name)
	return nil
}

func TestScanDamagedInput(t *testing.T) {
	top, files := damagedFiles(t)
	whole := damagedZip(t, files)
	volumes, engines := top+damagedDir+"volumes.yaml", top+damagedDir+"engines.yaml"
	without := func(drop ...string) []byte {
		m := map[string][]byte{}
		for k, v := range files {
			m[k] = v
		}
		for _, d := range drop {
			delete(m, d)
		}
		return damagedZip(t, m)
	}
	with := func(name string, content []byte) []byte {
		m := map[string][]byte{}
		for k, v := range files {
			m[k] = v
		}
		m[name] = content
		return damagedZip(t, m)
	}
	otherNS := bytes.ReplaceAll(files[engines], []byte("namespace: "+testenv.BundleNamespace), []byte("namespace: other"))
	wrongKind := bytes.ReplaceAll(files[engines], []byte("kind: Engine\n"), []byte("kind: Volume\n"))
	dupEngines := append(bytes.TrimRight(cutAtLine(t, files[engines], "kind: List"), "\n"), '\n')
	dupEngines = bytes.Replace(dupEngines, []byte("items:\n"), []byte("items:\n"+damagedFirstItem(t, files[engines], "resourceVersion: \"100\"", "resourceVersion: \"101\"")), 1)
	traversal := func() []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range []string{"../../etc/evil", top + "../" + top + damagedDir + "volumes.yaml"} {
			w, _ := zw.Create(n)
			_, _ = w.Write([]byte("x"))
		}
		for n, c := range files {
			if n == volumes {
				continue
			}
			w, _ := zw.Create(n)
			_, _ = w.Write(c)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}()

	tests := []struct {
		name   string
		file   string
		data   []byte
		stderr []string
		args   []string
	}{
		{"head -c 3000", "bundle.zip", whole[:3000], []string{"is damaged", "the files after the damage are missing"}, nil},
		{"truncated in the middle", "bundle.zip", whole[:len(whole)/2], []string{"is damaged"}, nil},
		{"corrupt zip", "bundle.zip", bytes.Repeat([]byte{0x5a}, 4096), []string{"neither a readable zip nor a folder"}, nil},
		{"no volumes.yaml", "bundle.zip", without(volumes), []string{"the bundle has no volumes.yaml: its volumes are unknown"}, nil},
		{"no engines.yaml", "bundle.zip", without(engines), []string{"the bundle has volumes but no engines.yaml"}, nil},
		{"engines.yaml cut mid-List at a line end", "bundle.zip", with(engines, cutAtLine(t, files[engines], "active: true")), []string{"cut short", "engines.yaml was not read completely"}, nil},
		{"wrong kind in engines.yaml", "bundle.zip", with(engines, wrongKind), []string{"Volume", "in the Engine file", "engines.yaml was not read completely"}, nil},
		{"objects of another namespace", "bundle.zip", with(engines, otherNS), []string{`of namespace "other" in the file of namespace "longhorn-system"`}, nil},
		{"duplicate names that differ", "bundle.zip", with(engines, dupEngines), []string{"two different copies", "engines.yaml was not read completely"}, nil},
		{"zip bomb (declared size)", "bundle.zip", declareHuge(t, whole, engines), []string{"the limit for one file (a zip bomb?)", "engines.yaml was not read completely"}, nil},
		{"path traversal hides volumes.yaml", "bundle.zip", traversal, []string{"climbs out of the bundle", "no volumes.yaml"}, nil},
		{"-f cut mid-object", "engines.yaml", cutAtLine(t, files[engines], "active: true"), []string{"cut short", "was not read completely"}, []string{"-f"}},
		{"-f without volumes", "engines.yaml", files[engines], []string{"no Volume objects were given"}, []string{"-f"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testenv.WriteTemp(t, tt.file, tt.data)
			flag := "--bundle"
			if tt.args != nil {
				flag = tt.args[0]
			}
			for _, out := range []string{"", "json"} {
				args := []string{"scan", flag, p}
				if out != "" {
					args = append(args, "-o", out)
				}
				r := offRun(t, args...)
				if r.Code != 2 {
					t.Errorf("%v: exit %d, want 2 (check incomplete)\n%s", args, r.Code, r)
				}
				if n := strings.Count(r.Stderr, "error: "); n != 1 {
					t.Errorf("%v: %d error lines, want 1\n%s", args, n, r)
				}
				if strings.Contains(r.Stderr, "No engine problems found") || strings.Contains(r.Stdout, "No engine problems found") {
					t.Errorf("%v: an incomplete check reads as healthy\n%s", args, r)
				}
				for _, s := range tt.stderr {
					if !strings.Contains(r.Stderr, s) {
						t.Errorf("%v: stderr lacks %q\n%s", args, s, r)
					}
				}
				if out == "json" && r.Stdout != "" {
					if rep := offReport(t, r); len(rep.Incomplete) == 0 {
						t.Errorf("the JSON report does not say what is missing:\n%s", r.Stdout)
					}
				}
			}
		})
	}
}

// Harmless oddities leave the check complete: the same copy of an object
// twice, and traversal entries beside a whole bundle.
func TestScanOddButCompleteInput(t *testing.T) {
	top, files := damagedFiles(t)
	engines := top + damagedDir + "engines.yaml"
	same := bytes.Replace(files[engines], []byte("items:\n"), []byte("items:\n"+damagedFirstItem(t, files[engines], "", "")), 1)
	m := map[string][]byte{"../../etc/evil": []byte("x")}
	for k, v := range files {
		m[k] = v
	}
	m[engines] = same
	p := testenv.WriteTemp(t, "bundle.zip", damagedZip(t, m))
	r := offRun(t, "scan", "--bundle", p)
	if r.Code != 1 || strings.Contains(r.Stderr, "error: ") || !strings.Contains(r.Stderr, "climbs out of the bundle") {
		t.Errorf("exit %d, want 1 (the findings of a complete check)\n%s", r.Code, r)
	}
}

// damagedFirstItem returns the List's first item as text, with old replaced
// by new, to be inserted again.
func damagedFirstItem(t *testing.T, list []byte, old, new string) string {
	t.Helper()
	s := string(list)
	start := strings.Index(s, "items:\n") + len("items:\n")
	rest := s[start:]
	end := strings.Index(rest[1:], "\n- ")
	if end < 0 {
		end = strings.Index(rest, "\nkind: ")
	} else {
		end++
	}
	item := rest[:end+1]
	if old != "" {
		if !strings.Contains(item, old) {
			t.Fatalf("%q not in the first item:\n%s", old, item)
		}
		item = strings.Replace(item, old, new, 1)
	}
	return item
}
