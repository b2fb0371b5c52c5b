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
