package readstate

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The fixtures live in internal/testenv (shared with the command tests).
const fxNS = testenv.BundleNamespace

var (
	fxCreated     = testenv.BundleCreated
	fxT1          = testenv.BugLinesAt
	fxObjects     = testenv.BundleScenario
	fxSetting     = testenv.JSONSetting
	fxEngine      = testenv.JSONEngine
	fxManagerLogs = testenv.ManagerLogs
	fxMeta        = testenv.JSONMeta
)

// fxBundle is a complete 1.4.3 bundle with unrelated files around it.
func fxBundle() *testenv.Bundle {
	return &testenv.Bundle{
		CreatedAt: fxCreated,
		Objects: append(fxObjects(fxNS, "v1.4.3"),
			map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": fxMeta(fxNS, "longhorn-manager-bbbbb", nil)},
			map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": fxMeta("kube-system", "coredns-1", nil)},
		),
		Logs: fxManagerLogs(fxNS, 3),
		Extra: map[string][]byte{
			"yamls/cluster/v1/nodes.yaml":                  []byte("apiVersion: v1\nitems: []\nkind: List\n"),
			"yamls/namespaced/" + fxNS + "/v1/events.yaml": []byte("apiVersion: v1\nitems: []\nkind: List\n"),
		},
	}
}

// warnings collects loader warnings.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) f(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprintf(format, args...))
}

func (w *warnings) String() string { return strings.Join(w.lines, "\n") }

func (w *warnings) has(t *testing.T, parts ...string) {
	t.Helper()
	for _, l := range w.lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return
		}
	}
	t.Errorf("no warning with %q in:\n%s", parts, w)
}

// summary is a stable text view of a state for comparisons.
func summary(st *longhorn.State) string {
	var out []string
	for _, v := range st.Volumes {
		out = append(out, fmt.Sprintf("volume %s node=%q current=%q migration=%q cmn=%q state=%s", v.Name, v.Spec.NodeID, v.Status.CurrentNodeID, v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID, v.Status.State))
	}
	for _, e := range st.Engines {
		out = append(out, fmt.Sprintf("engine %s vol=%s node=%q active=%t state=%s rw=%d deleting=%t", e.Name, e.Spec.VolumeName, e.Spec.NodeID, e.Spec.Active, e.Status.CurrentState, e.RWCount(), e.Deleting()))
	}
	for _, r := range st.Replicas {
		out = append(out, fmt.Sprintf("replica %s engine=%s active=%t", r.Name, r.Spec.EngineName, r.Spec.Active))
	}
	for _, va := range st.VolumeAttachments {
		out = append(out, fmt.Sprintf("va %s tickets=%d", va.Name, len(va.Spec.AttachmentTickets)))
	}
	for _, im := range st.InstanceManagers {
		out = append(out, fmt.Sprintf("im %s engines=%v", im.Name, im.EngineProcessNames()))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
