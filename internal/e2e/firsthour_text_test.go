package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// Issue #32 item 11, the parts about how the plugin's text reads: a passed
// check's evidence, describe's Why on a terminal and in a pipe, durations,
// and `make build`'s output folder.

// Item 11: a ✓ line never reads as its own contradiction. On Longhorn 1.5.0
// and 1.5.1 a stuck confirm leaves status.currentMigrationNodeID set to the
// node that now serves; "no migration is in flight" passes for it, and its
// evidence must say why, not show a set migration field alone. The same
// for a pending attach to the current node.
func TestPassedCheckShowsWhyItPassed(t *testing.T) {
	ctx := begin(t)
	const version = "v1.5.1"
	o := testenv.TwoActiveEngines(version, stuckVolume)
	o.Volumes[0].Status.PendingNodeID = testenv.NodeB
	create(ctx, t, o)
	r := kubectl(ctx, t, "longhorn-engines", "describe", stuckVolume)
	for _, c := range []struct{ check, field string }{
		{"no migration is in flight", "status.currentMigrationNodeID"},
		{"no attach is pending on another node", "status.pendingNodeID"},
	} {
		m := regexp.MustCompile(`(?m)^\s*(✓|✗) ` + regexp.QuoteMeta(c.check) + `\s+(.*)$`).FindStringSubmatch(r.Stdout)
		if m == nil {
			t.Errorf("describe has no %q line:\n%v", c.check, r)
			continue
		}
		if m[1] != "✓" || !strings.Contains(m[2], c.field+`="`+testenv.NodeB+`"`) {
			t.Errorf("%q: want ✓ with %s=%q (the scenario):\n%s", c.check, c.field, testenv.NodeB, m[0])
			continue
		}
		if !strings.Contains(m[2], "current node") {
			t.Errorf("%q passes beside %s=%q without saying that is the current node, so it reads as its own contradiction:\n%s",
				c.check, c.field, testenv.NodeB, m[0])
		}
	}
}
