package detect

import (
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Settled: a healthy volume is settled on its node with its one engine, and
// each condition, broken alone, is reported.
func TestSettled(t *testing.T) {
	settled := func(vc versionCase) *scenario {
		s := healthy(vc, "vol")
		if vc.parsed().HasVolumeAttachments() {
			s.withTickets(map[string]bool{longhorn.CSITicketID("vol", nodeA): true}, csiTicket("vol", nodeA))
		}
		return s
	}
	tests := []struct {
		name   string
		vc     versionCase
		mutate func(s *scenario)
		want   string // in the one thing missing
	}{
		{"settled", vcL14a, func(*scenario) {}, ""},
		{"settled 1.5", vcL15a, func(*scenario) {}, ""},
		{"another node asked", vcL14a, func(s *scenario) { s.volume().Spec.NodeID = nodeB }, `spec.nodeID="node-b" status.currentNodeID="node-a"`},
		{"not current", vcL14a, func(s *scenario) { s.volume().Status.CurrentNodeID = "" }, `status.currentNodeID=""`},
		{"migration asked", vcL14a, func(s *scenario) { s.volume().Spec.MigrationNodeID = nodeB }, `spec.migrationNodeID="node-b"`},
		{"migration current", vcL15a, func(s *scenario) { s.volume().Status.CurrentMigrationNodeID = nodeB }, `status.currentMigrationNodeID="node-b"`},
		{"no engine", vcL14a, func(s *scenario) { s.removeEngine(s.engA) }, "no engine"},
		{"two engines", vcL14a, func(s *scenario) {
			s.st.Engines = append(s.st.Engines, engine(vcL14a, "vol", "vol-e-x", nodeB, 0))
		}, "2 engine CRs: [" + engineName(vcL14a, "vol", 0) + "@node-a(active) vol-e-x@node-b(active)]"},
		{"engine inactive", vcL14a, func(s *scenario) { s.engine(s.engA).Spec.Active = false }, "active=false"},
		{"engine deleting", vcL14a, func(s *scenario) {
			now := ago(0)
			s.engine(s.engA).DeletionTimestamp = &now
		}, "deleting=true"},
		{"engine elsewhere", vcL14a, func(s *scenario) { s.engine(s.engA).Spec.NodeID = nodeB }, `node "node-b"`},
		{"engine stopped", vcL14a, func(s *scenario) { s.engine(s.engA).Status.CurrentState = longhorn.StateStopped }, `state "stopped"`},
		{"replica inactive", vcL14a, func(s *scenario) { s.st.Replicas[1].Spec.Active = false }, "replicas not active on " + engineName(vcL14a, "vol", 0) + ": [vol-r-aaaa0002"},
		{"replica of another engine", vcL14a, func(s *scenario) { s.st.Replicas[0].Spec.EngineName = "" }, "(engine <none>, active=true)"},
		{"no replica", vcL14a, func(s *scenario) { s.removeReplicasOf(s.engA) }, "no replica"},
		{"ticket not satisfied", vcL15a, func(s *scenario) {
			st := s.st.VolumeAttachments[0].Status.AttachmentTicketStatuses
			id := longhorn.CSITicketID("vol", nodeA)
			x := st[id]
			x.Satisfied = false
			st[id] = x
		}, "no satisfied attachment ticket on node-a"},
		{"ticket elsewhere", vcL15a, func(s *scenario) {
			s.st.VolumeAttachments = nil
			s.withTickets(map[string]bool{longhorn.CSITicketID("vol", nodeB): true}, csiTicket("vol", nodeB))
		}, "no satisfied attachment ticket on node-a"},
		// A volume read without tickets is not judged on them (fix never was).
		{"no VolumeAttachment", vcL15a, func(s *scenario) { s.st.VolumeAttachments = nil }, ""},
		{"the UI's ticket", vcL15a, func(s *scenario) {
			s.st.VolumeAttachments = nil
			s.withTickets(map[string]bool{LonghornUITicket: true}, longhorn.AttachmentTicket{ID: LonghornUITicket, Type: longhorn.AttacherTypeLonghornAPI, NodeID: nodeA})
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := settled(tt.vc)
			tt.mutate(s)
			engine, missing := Settled(s.st, "vol", nodeA)
			switch {
			case tt.want == "" && len(missing) > 0:
				t.Fatalf("not settled: %q", missing)
			case tt.want == "":
				if engine != s.engA {
					t.Errorf("engine %q, want %q", engine, s.engA)
				}
			case len(missing) != 1 || !strings.Contains(missing[0], tt.want):
				t.Errorf("missing %q, want one entry with %q", missing, tt.want)
			}
		})
	}
	if _, missing := Settled(settled(vcL14a).st, "other", nodeA); len(missing) != 1 || missing[0] != "no volume other" {
		t.Errorf("absent volume: %q", missing)
	}
}
