package lhreal

import (
	"bytes"
	"testing"
)

// A Helm action left in a release's crds.yaml makes the whole file invalid
// YAML, and every test of that release fails before it starts (1.9.0's
// conversion webhook namespace did).
func TestCRDsWithoutHelmActions(t *testing.T) {
	for _, rel := range Releases() {
		data, err := CRDs(rel)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if i := bytes.Index(data, []byte("{{")); i >= 0 {
			t.Errorf("%s: crds.yaml keeps a template action: %.80q", rel, data[i:])
		}
	}
}

// On a new machine no module cache holds a release's longhorn-manager
// until something downloads it, and the CRDs are read before any build of
// the release (a cold CI failed so). From an empty module cache they must
// be read all the same.
func TestCRDsFromAnEmptyModuleCache(t *testing.T) {
	if testing.Short() {
		t.Skip("downloads longhorn-manager through the Go module proxy")
	}
	t.Setenv("GOMODCACHE", t.TempDir())
	t.Setenv("GOFLAGS", "-modcacherw") // so that the temporary directory can be removed
	rel := Releases()[0]
	data, err := readCRDs(rel)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("kind: CustomResourceDefinition")) {
		t.Errorf("%s: no CustomResourceDefinition in %d bytes", rel, len(data))
	}
}
