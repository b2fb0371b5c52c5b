package scan

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
)

// describeFamily shows a state of the stuck-migration family: the upstream
// issues, the releases it occurs on and the maintainers' repair, step by
// step (docs/troubleshooting-migration-family.md).
func describeFamily(b *bytes.Buffer, f *detect.Finding, kv func(int, string, string)) {
	k := f.Family
	if k == nil {
		return
	}
	kv(0, "Upstream", strings.Join(k.Issues, ", "))
	rel := k.Releases
	if k.AffectedRelease {
		rel += "; the running release is one of them"
	}
	kv(0, "Occurs on", rel)
	if f.Action.Writes() {
		b.WriteString("Maintainers' repair (fix makes it, see Repair; by hand):\n")
	} else {
		b.WriteString("Maintainers' repair (fix does not do it):\n")
	}
	for i, s := range k.Steps {
		fmt.Fprintf(b, "  %d. %s\n", i+1, s)
	}
	kv(0, "See", k.Doc)
}
