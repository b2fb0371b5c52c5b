package scan_test

import (
	"regexp"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
)

// Times and ages come from the API server's clock; everything else in the
// output is fixed by the fixtures.
var timestamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)

func golden(t *testing.T, name, got string) {
	t.Helper()
	testenv.Golden(t, name, testenv.Ages(timestamp.ReplaceAllString(got, "<time>")))
}

func TestGoldenOutputs(t *testing.T) {
	ctx := reset(t)
	objs := testenv.Nodes()
	for _, s := range testenv.Scenarios {
		objs.Add(s.Build("v1.4.3", s.Name))
	}
	if err := testenv.Create(ctx, cluster, objs); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, output string }{
		{"table-v1.4.3.golden", "table"},
		{"wide-v1.4.3.golden", "wide"},
		{"json-v1.4.3.golden", "json"},
		{"yaml-v1.4.3.golden", "yaml"},
		{"name-v1.4.3.golden", "name"},
	} {
		t.Run(tc.output, func(t *testing.T) {
			res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "scan", "-o", tc.output, "--color", "never")
			if res.Code != 1 {
				t.Fatalf("want exit 1:\n%s", res)
			}
			golden(t, tc.file, res.Stdout)
		})
	}
}
