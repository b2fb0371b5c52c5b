package fixwatch_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
)

// Every document in deploy/ decodes strictly into its client-go type: a
// misspelt or misplaced field, a wrong type or a duplicate key fails here.
// The test API server serves no core, batch or rbac API, so this, not
// `kubectl apply --dry-run=server`, is the check these files get in CI; the
// server-side validation of a real cluster (for example of the Job's pod
// template) is not run.
func TestDeployManifestsDecodeStrictly(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", deployDir, err)
	}
	strict := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, doc := range strings.Split(string(b), "\n---\n") {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			n++
			if strings.Contains(doc, "apiVersion: "+monitoringGroup+"/") {
				continue // not in client-go's scheme: TestMonitoringManifests
			}
			obj, gvk, err := strict.Decode([]byte(doc), nil, nil)
			if err != nil {
				t.Errorf("%s: document %d: %v", filepath.Base(f), n, err)
				continue
			}
			if gvk.Kind == "" || obj == nil {
				t.Errorf("%s: document %d has no kind", filepath.Base(f), n)
			}
		}
		if n == 0 {
			t.Errorf("%s holds no object", filepath.Base(f))
		}
	}
}

func stripComments(doc string) string {
	var out []string
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
