package realtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// familyFinding is one finding of `scan VOL -o json`, read into the
// report's own type (docs/scan-report.md).
type familyFinding = detect.Finding

// familyFinding polls scan until it reports vol with a finding of typ
// (exit 1), and returns that finding.
func (e *env) familyFinding(vol, typ string) familyFinding {
	e.t.Helper()
	var got familyFinding
	e.scanUntil("scan reports "+typ, vol, func(out, _ string, code int) bool {
		var r struct {
			Findings []familyFinding `json:"findings"`
		}
		if code != 1 || json.Unmarshal([]byte(out), &r) != nil {
			return false
		}
		for _, f := range r.Findings {
			if string(f.Type) == typ && f.Family != nil {
				got = f
				return true
			}
		}
		return false
	}, "-o", "json")
	if !got.Family.AffectedRelease {
		e.t.Errorf("scan: %s on Longhorn %s with affectedRelease false", typ, e.release)
	}
	if got.Action != "" && got.Action != "none" {
		e.t.Errorf("scan proposes fix's action %q for %s; fix repairs none of the family states tested here", got.Action, typ)
	}
	return got
}

// ticket is f's evidence of ticket id (its type, node and whether it is
// satisfied), or fails the test.
func (e *env) ticket(f familyFinding, id string) (typ, node string, satisfied bool) {
	e.t.Helper()
	for _, tk := range f.Evidence.Tickets {
		if tk.ID == id {
			return tk.Type, tk.NodeID, tk.Satisfied
		}
	}
	e.t.Fatalf("scan's evidence of %s lacks ticket %s: %+v", f.Type, id, f.Evidence.Tickets)
	return "", "", false
}

// step is the one step of f that contains every part, or fails the test.
func (e *env) step(f familyFinding, parts ...string) string {
	e.t.Helper()
	for _, s := range f.Family.Steps {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(s, p)
		}
		if all {
			return s
		}
	}
	e.t.Fatalf("no step of %s names %q: %q", f.Type, parts, f.Family.Steps)
	return ""
}

// stuckWindow is how long a state must last, at the least, to count as
// one Longhorn does not leave by itself: three resyncs of the harness's
// informers (5 s each, test/longhorn/control/harness), so that every
// controller syncs the volume from its cache more than once, besides the
// syncs the writes themselves trigger.
const stuckWindow = 15 * time.Second

// stays polls vol for stuckWindow, and until Longhorn's controllers have
// logged evidence (when not "") twice more than before, and fails the test
// the moment stuck stops holding. It is an observation window, not a
// sleep: every poll checks the state.
func (e *env) stays(what, vol string, stuck func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool, evidence string) {
	e.t.Helper()
	base := strings.Count(e.lh.Logs(), evidence)
	start := time.Now()
	var last string
	e.await(what+" for "+stuckWindow.String(), func() bool {
		v, es, rs := e.state(vol)
		if !stuck(v, es, rs) {
			e.t.Fatalf("Longhorn %s left the state after %s: %s, not %s\n%s", e.release, time.Since(start).Round(time.Second), describeState(v, es, rs), what, last)
		}
		last = describeState(v, es, rs)
		logged := evidence == "" || strings.Count(e.lh.Logs(), evidence) >= base+2
		return logged && time.Since(start) >= stuckWindow
	})
	e.t.Logf("Longhorn %s: %s for %s: %s", e.release, what, time.Since(start).Round(time.Second), last)
}

// describeState is one line of vol's state for a log.
func describeState(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) string {
	var b strings.Builder
	fmt.Fprintf(&b, "volume %s nodeID=%q currentNodeID=%q migrationNodeID=%q currentMigrationNodeID=%q pendingNodeID=%q image=%q currentImage=%q;",
		v.Status.State, v.Spec.NodeID, v.Status.CurrentNodeID, v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID, v.Status.PendingNodeID, v.WantedImage(), v.Status.CurrentImage)
	for _, en := range es {
		fmt.Fprintf(&b, " engine %s node=%q active=%t %s image=%q;", en.Name, en.Spec.NodeID, en.Spec.Active, en.Status.CurrentState, en.ImageName())
	}
	fmt.Fprintf(&b, " %d replicas", len(rs))
	return b.String()
}

// va reads vol's Longhorn VolumeAttachment.
func (e *env) va(vol string) *longhorn.VolumeAttachment {
	e.t.Helper()
	u, err := e.c.Dynamic().Resource(longhorn.VolumeAttachments.GVR()).Namespace(e.ns).Get(e.ctx, vol, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return testenv.Decode[longhorn.VolumeAttachment](e.t, u)
}

// addTicket adds an attachment ticket to vol's VolumeAttachment as the
// Longhorn component that owns its type does (createOrUpdateAttachmentTicket:
// id, type, node, disableFrontend), without the simulated webhook's ticket
// count; lhsim bumps its generation as Longhorn's mutating webhook would.
func (e *env) addTicket(vol, id, typ, node, disableFrontend string) {
	e.t.Helper()
	p := fmt.Sprintf(`{"spec":{"attachmentTickets":{%q:{"id":%q,"type":%q,"nodeID":%q,"parameters":{"disableFrontend":%q}}}}}`, id, id, typ, node, disableFrontend)
	e.patch(longhorn.VolumeAttachments, vol, p)
}

// removeTicket removes ticket id from vol's VolumeAttachment.
func (e *env) removeTicket(vol, id string) {
	e.t.Helper()
	p := fmt.Sprintf(`[{"op":"remove","path":"/spec/attachmentTickets/%s"}]`, id)
	if _, err := e.c.Dynamic().Resource(longhorn.VolumeAttachments.GVR()).Namespace(e.ns).Patch(e.ctx, vol, types.JSONPatchType, []byte(p), metav1.PatchOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// between reports whether rel is in [lo, hi] (both "1.5.3" style).
func between(rel, lo, hi string) bool {
	v := longhorn.MustParseVersion(rel)
	l, h := longhorn.MustParseVersion(lo), longhorn.MustParseVersion(hi)
	return v.AtLeast(l.Major, l.Minor, l.Patch) && !v.AtLeast(h.Major, h.Minor, h.Patch+1)
}
