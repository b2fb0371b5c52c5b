package detect

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// crashDetachedState: Longhorn detached vol after its migration from A to B
// failed; csi-attacher tickets for both nodes remain.
func crashDetachedState(vc versionCase, vol string) *scenario {
	s := healthy(vc, vol)
	v := s.volume()
	v.Spec.NodeID, v.Status.CurrentNodeID = "", ""
	v.Status.State, v.Status.Robustness = longhorn.VolumeStateDetached, longhorn.RobustnessUnknown
	va := longhorn.VolumeAttachment{Spec: longhorn.VolumeAttachmentSpec{Volume: vol, AttachmentTickets: map[string]longhorn.AttachmentTicket{}}}
	va.Name, va.Namespace = vol, longhorn.DefaultNamespace
	for _, n := range []string{nodeB, nodeA} {
		id := longhorn.CSITicketID(vol, n)
		va.Spec.AttachmentTickets[id] = longhorn.AttachmentTicket{ID: id, Type: longhorn.AttacherTypeCSI, NodeID: n}
	}
	s.st.VolumeAttachments = append(s.st.VolumeAttachments, va)
	return s
}

// TestCrashDetached: the finding exists exactly where Longhorn's
// VolumeAttachment controller refuses to attach (1.7+, two csi-attacher
// tickets, nothing of higher priority), names both nodes and needs a person.
func TestCrashDetached(t *testing.T) {
	for _, vc := range append(allVersions, versionCase{"1.7.0", "v1.7.0", false}, versionCase{"1.10.0", "v1.10.0", false}) {
		t.Run(vc.name, func(t *testing.T) {
			if !vc.parsed().HasVolumeAttachments() {
				return
			}
			s := crashDetachedState(vc, "vol")
			res, f := s.classify(t)
			want := vc.parsed().AtLeast(1, 7, 0)
			if got := len(res.Findings) == 1 && f.Type == TypeMigrationCrashDetached; got != want {
				t.Fatalf("MigrationCrashDetached=%t, want %t: %s", got, want, mustJSON(res.Findings))
			}
			if !want {
				return
			}
			if f.Severity != SeverityWarning || f.Action != ActionNone || !strings.Contains(f.Reason, "node-a and node-b") {
				t.Errorf("finding %s", mustJSON(f))
			}
			// a ticket of higher priority is attached first: no longer
			// crash-detached, but the longhorn-ui ticket now keeps the
			// csi ticket for node-b waiting
			s.st.VolumeAttachments[0].Spec.AttachmentTickets["longhorn-ui"] = longhorn.AttachmentTicket{ID: "longhorn-ui", Type: "longhorn-api", NodeID: nodeA}
			if res, _ := s.classify(t); len(res.Findings) != 1 || res.Findings[0].Type != TypeLeftoverAttachRequest {
				t.Errorf("with a longhorn-api ticket: %s", mustJSON(res.Findings))
			}
			// one csi ticket left: Longhorn attaches the volume there
			s = crashDetachedState(vc, "vol")
			delete(s.st.VolumeAttachments[0].Spec.AttachmentTickets, longhorn.CSITicketID("vol", nodeA))
			if res, _ := s.classify(t); len(res.Findings) != 0 {
				t.Errorf("with one csi ticket: %s", mustJSON(res.Findings))
			}
		})
	}
}
