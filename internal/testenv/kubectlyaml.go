package testenv

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"
)

// KubectlYAML is v as `kubectl get -o yaml` prints it, the input of
// scan -f and preflight -f: marshalled through its JSON form, so the json
// tags name the fields. It fails the test on error.
func KubectlYAML(t testing.TB, v any) []byte {
	t.Helper()
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(j)
	if err != nil {
		t.Fatal(err)
	}
	return y
}
