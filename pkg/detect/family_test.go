package detect

import (
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

var (
	vc17  = versionCase{"1.7.2", "v1.7.2", false}
	vc19  = versionCase{"1.9.1", "v1.9.1", false}
	vc110 = versionCase{"1.10.0", "v1.10.0", false}
	vc111 = versionCase{"1.11.1", "v1.11.1", false}
)

// withTickets gives the scenario's volume a VolumeAttachment with the
// tickets, each satisfied when sat says so.
func (s *scenario) withTickets(sat map[string]bool, ts ...longhorn.AttachmentTicket) *longhorn.VolumeAttachment {
	va := longhorn.VolumeAttachment{}
	va.Name, va.Namespace = s.vol, longhorn.DefaultNamespace
	va.Labels = map[string]string{longhorn.VolumeLabel: s.vol}
	va.Spec.Volume = s.vol
	va.Spec.AttachmentTickets = map[string]longhorn.AttachmentTicket{}
	va.Status.AttachmentTicketStatuses = map[string]longhorn.AttachmentTicketStatus{}
	for _, t := range ts {
		t.Generation = 1
		va.Spec.AttachmentTickets[t.ID] = t
		va.Status.AttachmentTicketStatuses[t.ID] = longhorn.AttachmentTicketStatus{ID: t.ID, Satisfied: sat[t.ID], Generation: 1}
	}
	s.st.VolumeAttachments = append(s.st.VolumeAttachments, va)
	return &s.st.VolumeAttachments[len(s.st.VolumeAttachments)-1]
}

func csiTicket(vol, node string) longhorn.AttachmentTicket {
	return longhorn.AttachmentTicket{ID: longhorn.CSITicketID(vol, node), Type: longhorn.AttacherTypeCSI, NodeID: node}
}

// withVMPod puts a running virt-launcher pod of vm-1 on node (none when
// node is ""), with pods and CSI attachments read.
func (s *scenario) withVMPod(node string, csiNodes ...string) {
	v := s.volume()
	v.Status.KubernetesStatus = longhorn.KubernetesStatus{PVName: s.vol, PVCName: "disk-1", Namespace: "default",
		WorkloadsStatus: []longhorn.WorkloadStatus{{PodName: "virt-launcher-vm-1-abcde", WorkloadName: "vm-1", WorkloadType: WorkloadTypeVMI}}}
	w := &s.st.Workloads
	w.PodsRead = longhorn.ReadStatus{Read: true}
	w.CSIRead = longhorn.ReadStatus{Read: true}
	if node != "" {
		w.Pods = append(w.Pods, longhorn.Pod{Namespace: "default", Name: "virt-launcher-vm-1-abcde", NodeName: node, Phase: "Running",
			Claims: []string{"disk-1"}, OwnerKind: longhorn.KindVMI, OwnerName: "vm-1", VirtLauncher: true, VMI: "vm-1"})
	}
	for _, n := range csiNodes {
		w.CSIAttachments = append(w.CSIAttachments, longhorn.CSIAttachment{Name: longhorn.CSITicketID(s.vol, n), Attacher: longhorn.CSIDriver,
			PVName: s.vol, NodeName: n, Attached: true})
	}
}

// expectFamily: s classifies as the family finding want, with complete
// family info, no write, and the steps; on an affected release it needs
// attention, on another Longhorn leaves the state itself (expectWait).
func expectFamily(t *testing.T, s *scenario, want Type, affected bool, steps ...string) Finding {
	t.Helper()
	_, f := s.classify(t)
	if f.Type != want {
		t.Fatalf("type %q, want %q: %s", f.Type, want, f.Reason)
	}
	if f.Family == nil {
		t.Fatalf("%s: no family info", want)
	}
	if f.Family.AffectedRelease != affected {
		t.Errorf("%s on %s: affectedRelease %t, want %t", want, s.vc.version, f.Family.AffectedRelease, affected)
	}
	if f.Action.Writes() {
		t.Errorf("%s: action %q writes; the family is detected, not repaired, here (family_fix_test.go has the repairs)", want, f.Action)
	}
	if len(f.Family.Issues) == 0 || f.Family.Releases == "" || !strings.HasPrefix(f.Family.Doc, FamilyDoc+"#") {
		t.Errorf("%s: incomplete family info %+v", want, f.Family)
	}
	all := strings.Join(f.Family.Steps, "\n")
	for _, s := range steps {
		if !strings.Contains(all, s) {
			t.Errorf("%s: steps lack %q:\n%s", want, s, all)
		}
	}
	if affected && !f.Severity.NeedsAttention() {
		t.Errorf("%s: severity %s does not make scan exit 1", want, f.Severity)
	}
	if !affected {
		expectWait(t, f)
	}
	return f
}

// expectWait: on a release whose own controller leaves the state by itself,
// the family finding is informational and waits.
func expectWait(t *testing.T, f Finding) {
	t.Helper()
	if f.Severity != SeverityInfo || f.Action != ActionWait || !strings.Contains(f.Reason, "itself") {
		t.Errorf("%s: %s/%s, want info/wait (Longhorn leaves the state itself): %s", f.Type, f.Severity, f.Action, f.Reason)
	}
}

func TestFamilyMigrationNeverConfirmed(t *testing.T) {
	s := migrating(vc17, "vol-nc")
	s.withTickets(map[string]bool{longhorn.CSITicketID("vol-nc", nodeA): true, longhorn.CSITicketID("vol-nc", nodeB): true},
		csiTicket("vol-nc", nodeA), csiTicket("vol-nc", nodeB))
	s.withVMPod(nodeB, nodeA, nodeB)
	f := expectFamily(t, s, TypeMigrationNeverConfirmed, true,
		"kubectl delete volumeattachments.storage.k8s.io "+longhorn.CSITicketID("vol-nc", nodeA),
		"virtctl stop vm-1 -n default", "virtctl start vm-1 -n default")
	if !strings.Contains(f.Reason, "orphaned") || f.Keep != s.engA || roleOf(f, s.engB) != "migration" {
		t.Errorf("reason/roles: %s keep=%s role(B)=%s", f.Reason, f.Keep, roleOf(f, s.engB))
	}

	// the VM still runs on the old node: a migration in flight, not stuck
	s = migrating(vc17, "vol-nc")
	s.withTickets(map[string]bool{longhorn.CSITicketID("vol-nc", nodeA): true, longhorn.CSITicketID("vol-nc", nodeB): true},
		csiTicket("vol-nc", nodeA), csiTicket("vol-nc", nodeB))
	s.withVMPod(nodeA, nodeA, nodeB)
	if _, f := s.classify(t); f.Type != TypeMigrationInFlight {
		t.Errorf("VM on the old node: %s, want MigrationInFlight", f.Type)
	}
	// pods not read: no claim about the workload
	s = migrating(vc17, "vol-nc")
	s.withTickets(map[string]bool{longhorn.CSITicketID("vol-nc", nodeA): true, longhorn.CSITicketID("vol-nc", nodeB): true},
		csiTicket("vol-nc", nodeA), csiTicket("vol-nc", nodeB))
	if _, f := s.classify(t); f.Type != TypeMigrationInFlight {
		t.Errorf("pods not read: %s, want MigrationInFlight", f.Type)
	}
	// the target's ticket not yet satisfied: still migrating
	s = migrating(vc17, "vol-nc")
	s.withTickets(map[string]bool{longhorn.CSITicketID("vol-nc", nodeA): true}, csiTicket("vol-nc", nodeA), csiTicket("vol-nc", nodeB))
	s.withVMPod(nodeB, nodeA, nodeB)
	if _, f := s.classify(t); f.Type != TypeMigrationInFlight {
		t.Errorf("target ticket unsatisfied: %s, want MigrationInFlight", f.Type)
	}
}

func TestFamilyStaleMigrationNodeID(t *testing.T) {
	for _, tc := range []struct {
		vc       versionCase
		state    string
		affected bool
	}{
		{vcL15f, longhorn.VolumeStateDetached, true},
		{vc19, longhorn.VolumeStateDetaching, true},
		{vc110, longhorn.VolumeStateDetached, false}, // 1.10.0 clears it (explorer E19)
	} {
		s := healthy(tc.vc, "vol-cm")
		v := s.volume()
		v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.State = "", "", tc.state
		v.Status.CurrentMigrationNodeID = nodeB
		s.engine(s.engA).Spec.NodeID = ""
		s.engine(s.engA).Status.CurrentState = longhorn.StateStopped
		expectFamily(t, s, TypeStaleMigrationNodeID, tc.affected,
			`patch volumes.longhorn.io vol-cm --subresource=status --type=merge -p '{"status":{"currentMigrationNodeID":""}}'`)
	}
	// 1.10+ clears it only when its finish finds an engine to keep: not
	// the one engine inactive and on no node (1.12.0, seed 37 state 10)
	s0 := healthy(vc110, "vol-cm")
	v0 := s0.volume()
	v0.Spec.NodeID, v0.Status.CurrentNodeID, v0.Status.State = "", "", longhorn.VolumeStateDetached
	v0.Status.CurrentMigrationNodeID = nodeA
	e0 := s0.engine(s0.engA)
	e0.Spec.NodeID, e0.Spec.Active, e0.Status.CurrentState = "", false, longhorn.StateStopped
	if _, f := s0.classify(t); f.Type != TypeStaleMigrationNodeID || f.Severity != SeverityWarning || !strings.Contains(f.Reason, "finds no engine to keep") {
		t.Errorf("1.10.0, the engine inactive: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
	// attached with currentMigrationNodeID and no request: Longhorn is
	// finishing a confirm or rollback
	s := healthy(vcL15f, "vol-cm")
	s.volume().Status.CurrentMigrationNodeID = nodeB
	if _, f := s.classify(t); f.Type != TypeMigrationFinishing {
		t.Errorf("attached: %s, want MigrationFinishing", f.Type)
	}
}

func TestFamilyMigrationWithoutNode(t *testing.T) {
	for _, tc := range []struct {
		vc       versionCase
		affected bool
	}{{vcL15f, true}, {vcL16, true}, {vc17, false /* 1.7.0 cancels it */}} {
		s := migrating(tc.vc, "vol-nn")
		v := s.volume()
		v.Spec.NodeID = ""
		expectFamily(t, s, TypeMigrationWithoutNode, tc.affected,
			"kubectl delete volumeattachments.storage.k8s.io "+longhorn.CSITicketID("vol-nn", nodeB),
			`'{"spec":{"migrationNodeID":""}}'`)
	}
	// 1.5/1.6 with the VolumeAttachment read: without a csi ticket for the
	// target Longhorn clears the request (explorer E18); with one it stays.
	for _, target := range []bool{false, true} {
		s := migrating(vcL16, "vol-nn")
		s.volume().Spec.NodeID = ""
		ts := []longhorn.AttachmentTicket{csiTicket("vol-nn", nodeA)}
		if target {
			ts = append(ts, csiTicket("vol-nn", nodeB))
		}
		s.withTickets(map[string]bool{}, ts...)
		if !target {
			_, f := s.classify(t)
			if f.Type != TypeMigrationWithoutNode {
				t.Fatalf("type %s, want %s", f.Type, TypeMigrationWithoutNode)
			}
			expectWait(t, f)
			continue
		}
		expectFamily(t, s, TypeMigrationWithoutNode, true)
	}
	// from 1.7 with tickets on two or more nodes: Longhorn cancels the
	// request and keeps the volume detached (1.10.0, explorer seed 33
	// state 153, three nodes)
	s := migrating(vc110, "vol-nn")
	s.volume().Spec.NodeID = ""
	s.withTickets(map[string]bool{}, csiTicket("vol-nn", nodeA), csiTicket("vol-nn", nodeB), csiTicket("vol-nn", nodeC))
	if _, f := s.classify(t); f.Type != TypeMigrationWithoutNode || f.Severity != SeverityWarning || !strings.Contains(f.Reason, "keeps the volume detached") {
		t.Errorf("1.10.0, three tickets: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
	s.withTickets(map[string]bool{}, csiTicket("vol-nn", nodeB))
	if _, f := s.classify(t); f.Type != TypeMigrationWithoutNode || f.Severity != SeverityInfo {
		t.Errorf("1.10.0, the target's ticket alone: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
	// detached, one engine, inactive and on no node, with
	// status.currentMigrationNodeID on another: once cancelled, the finish
	// finds no engine (1.12.0, seed 35 state 93)
	s = migrating(vc110, "vol-nn")
	v := s.volume()
	v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.CurrentMigrationNodeID = "", "", nodeA
	v.Status.State = longhorn.VolumeStateDetached
	s.withTickets(map[string]bool{})
	s.removeEngine(s.engB)
	s.removeReplicasOf(s.engB)
	e := s.engine(s.engA)
	e.Spec.Active, e.Spec.NodeID = false, ""
	if _, f := s.classify(t); f.Type != TypeMigrationWithoutNode || f.Severity != SeverityWarning || !strings.Contains(f.Reason, "finds no current engine") {
		t.Errorf("1.10.0, detached, the engine inactive: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
}

func TestFamilyMigrationBlockedByTickets(t *testing.T) {
	backup := longhorn.AttachmentTicket{ID: "backup-controller-backup-7f3a", Type: "backup-controller", NodeID: nodeA}
	for _, tc := range []struct {
		vc   versionCase
		want Type
	}{{vc17, TypeMigrationBlockedByTickets}, {vc110, TypeMigrationBlockedByTickets}, {vc111, ""}, {vcL16, ""}} {
		s := healthy(tc.vc, "vol-tk")
		s.withTickets(map[string]bool{}, csiTicket("vol-tk", nodeA), backup)
		if tc.want == "" {
			if _, f := s.classify(t); f.Type != "" {
				t.Errorf("%s: %s, want healthy (only csi tickets count, or no ticket limit)", tc.vc.version, f.Type)
			}
			continue
		}
		f := expectFamily(t, s, tc.want, true, "get backups.longhorn.io backup-7f3a")
		if !strings.Contains(f.Reason, "backup-controller-backup-7f3a") {
			t.Errorf("reason does not name the ticket: %s", f.Reason)
		}
	}
	// a csi ticket alone blocks nothing
	s := healthy(vc17, "vol-tk")
	s.withTickets(map[string]bool{}, csiTicket("vol-tk", nodeA))
	if _, f := s.classify(t); f.Type != "" {
		t.Errorf("one csi ticket: %s, want healthy", f.Type)
	}
}

func TestFamilyLeftoverAttachRequest(t *testing.T) {
	s := healthy(vcL15f, "vol-pn")
	v := s.volume()
	v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.State, v.Status.PendingNodeID = "", "", longhorn.VolumeStateDetached, nodeA
	expectFamily(t, s, TypeLeftoverAttachRequest, true, `'{"status":{"pendingNodeID":""}}'`)
	// before 1.5 Longhorn re-attaches to status.pendingNodeID itself
	s = healthy(vcL14a, "vol-pn")
	v = s.volume()
	v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.State, v.Status.PendingNodeID = "", "", longhorn.VolumeStateDetached, nodeA
	if _, f := s.classify(t); f.Type == TypeLeftoverAttachRequest {
		t.Errorf("1.4: %s", f.Type)
	}

	s = healthy(vcL15f, "vol-ui")
	s.withTickets(map[string]bool{LonghornUITicket: true},
		longhorn.AttachmentTicket{ID: LonghornUITicket, Type: longhorn.AttacherTypeLonghornAPI, NodeID: nodeA}, csiTicket("vol-ui", nodeB))
	expectFamily(t, s, TypeLeftoverAttachRequest, true, `"path":"/spec/attachmentTickets/longhorn-ui"`)

	// the ui ticket on the node the workload also wants: nothing blocked
	s = healthy(vcL15f, "vol-ui")
	s.withTickets(map[string]bool{LonghornUITicket: true, longhorn.CSITicketID("vol-ui", nodeA): true},
		longhorn.AttachmentTicket{ID: LonghornUITicket, Type: longhorn.AttacherTypeLonghornAPI, NodeID: nodeA}, csiTicket("vol-ui", nodeA))
	if _, f := s.classify(t); f.Type != "" {
		t.Errorf("ui ticket beside a satisfied csi ticket: %s, want healthy", f.Type)
	}
}

func TestFamilyUpgradeMigrationDeadlock(t *testing.T) {
	s := migrating(vcL15f, "vol-up")
	s.volume().Spec.EngineImage = imgNew
	f := expectFamily(t, s, TypeUpgradeMigrationDeadlock, true, "delete engines.longhorn.io "+s.engB,
		`patch volumes.longhorn.io vol-up --type=merge -p '{"spec":{"engineImage":"`+testenv.EngineImage+`"}}'   # roll the engine upgrade back`)
	if len(f.Stale) != 1 || f.Stale[0] != s.engB {
		t.Errorf("stale %v, want [%s]", f.Stale, s.engB)
	}
	// Longhorn 1.4.3's and 1.5.3's own controllers finish the migration
	// after the rollback, not after the delete (internal/realtest): the
	// rollback comes first, the delete only as the fallback
	if roll, del := stepIndex(f, "roll the engine upgrade back"), stepIndex(f, "delete engines.longhorn.io"); roll < 0 || del < roll ||
		!strings.HasPrefix(f.Family.Steps[del], "only if the upgrade cannot be rolled back") {
		t.Errorf("steps: the rollback (%d) must come before the delete (%d), which is a fallback:\n%s", roll, del, strings.Join(f.Family.Steps, "\n"))
	}
	// from 1.6 the field is spec.image
	s = migrating(vcL16, "vol-up")
	s.volume().Spec.EngineImage, s.volume().Spec.Image = "", imgNew
	expectFamily(t, s, TypeUpgradeMigrationDeadlock, true, `'{"spec":{"image":"`+testenv.EngineImage+`"}}'`)
	// one engine upgrading: an ordinary upgrade
	s = healthy(vcL15f, "vol-up")
	s.volume().Spec.EngineImage = imgNew
	if _, f := s.classify(t); f.Type != "" {
		t.Errorf("one engine upgrading: %s, want healthy", f.Type)
	}
	// two active engines and an upgrade: the #6642 row wins
	s = stuck(vcL15f, "vol-up")
	s.volume().Spec.EngineImage = imgNew
	if _, f := s.classify(t); f.Type != TypeMultipleActiveEngines {
		t.Errorf("two active engines: %s, want MultipleActiveEngines", f.Type)
	}
}

func TestFamilyMigrationReplicaChurn(t *testing.T) {
	s := migrating(vc110, "vol-ch")
	for _, r := range s.replicasOf(s.engB) {
		r.Spec.LastFailedAt, r.Spec.HealthyAt = "2024-04-30T10:00:00Z", "" // failed, never healthy
	}
	f := expectFamily(t, s, TypeMigrationReplicaChurn, true, "get replicas.longhorn.io -l longhornvolume=vol-ch")
	if !strings.Contains(f.Reason, "lastFailedAt") {
		t.Errorf("reason: %s", f.Reason)
	}
	// a data directory cloned twice: the engine restarts for ever
	s = migrating(vc110, "vol-ch")
	twin := replica("vol-ch", "vol-ch-r-bbbb0003", nodeA, s.engB, false)
	s.st.Replicas = append(s.st.Replicas, twin)
	for _, r := range s.replicasOf(s.engB) {
		r.Spec.DiskID, r.Spec.DiskPath = "disk-1", "/var/lib/longhorn"
	}
	expectFamily(t, s, TypeMigrationReplicaChurn, true)
}

// confirmedWithoutEngine: a 1.4 confirm that landed while Longhorn had the
// migration engine stopped, off its node, for a restart.
func confirmedWithoutEngine(vc versionCase, vol string) *scenario {
	s := migrating(vc, vol)
	v := s.volume()
	v.Spec.NodeID, v.Spec.MigrationNodeID, v.Status.CurrentNodeID = nodeB, "", nodeB
	e := s.engine(s.engB)
	e.Spec.NodeID, e.Spec.DesireState, e.Status.CurrentState, e.Status.Endpoint = "", longhorn.StateStopped, longhorn.StateStopped, ""
	return s
}

func TestFamilyConfirmWithoutEngine(t *testing.T) {
	s := confirmedWithoutEngine(vcL14a, "vol-cw")
	f := expectFamily(t, s, TypeConfirmWithoutEngine, true,
		`patch engines.longhorn.io `+s.engB+` --type merge -p '{"spec":{"nodeID":"node-b"}}'`)
	if roleOf(f, s.engB) != "migration" || !strings.Contains(f.Reason, "stuck") {
		t.Errorf("role(B)=%q reason %s", roleOf(f, s.engB), f.Reason)
	}
	// two engines without a node: no single one to place, no patch offered
	s = confirmedWithoutEngine(vcL14a, "vol-cw")
	s.withEngine(engineName(vcL14a, "vol-cw", 2), "", time.Minute, "cccc", false)
	f = expectFamily(t, s, TypeConfirmWithoutEngine, true, "no single migration engine to place")
	if strings.Contains(strings.Join(f.Family.Steps, "\n"), "patch") {
		t.Errorf("a patch offered with two candidates: %v", f.Family.Steps)
	}
	// the migration engine on the target: an ordinary confirm being finished
	s = confirmedWithoutEngine(vcL14a, "vol-cw")
	s.engine(s.engB).Spec.NodeID = nodeB
	if _, f := s.classify(t); f.Type == TypeConfirmWithoutEngine {
		t.Errorf("engine on the target: %s", f.Type)
	}
	// no migration engine left at all: the confirm branch needs two
	// engines, nothing moves (explorer, seed 28 states 64, 182 on 1.4.3)
	s = healthy(vcL14a, "vol-cw")
	s.volume().Spec.NodeID = nodeB
	f = expectFamily(t, s, TypeConfirmWithoutEngine, true, "stop the workload so that the volume detaches, then start it again on node-b")
	if strings.Contains(strings.Join(f.Family.Steps, "\n"), "patch") {
		t.Errorf("a patch offered with no migration engine: %v", f.Family.Steps)
	}
	// the same with status.pendingNodeID on the engine's node: nothing
	// switches (explorer, seed 45 state 1662 on 1.4.3)
	s.volume().Status.PendingNodeID = nodeA
	expectFamily(t, s, TypeConfirmWithoutEngine, true, "stop the workload so that the volume detaches, then start it again on node-b")
	// the old engine crashed: Longhorn detaches and attaches the volume on
	// spec.nodeID itself (explorer, seed 28 state 160 on 1.4.3)
	s = confirmedWithoutEngine(vcL14a, "vol-cw")
	s.engine(s.engA).Status.CurrentState = longhorn.StateError
	if _, f := s.classify(t); f.Type == TypeConfirmWithoutEngine || f.Severity != SeverityInfo {
		t.Errorf("old engine in error: %s/%s: %s", f.Type, f.Severity, f.Reason)
	}
	// stopped instead: Longhorn 1.4.3 neither finished nor restarted it
	// (explorer, seed 45 state 2351)
	s.engine(s.engA).Status.CurrentState = longhorn.StateStopped
	_, f = s.classify(t)
	wantWarning(t, "old engine stopped", f, TypeMigrationFinishing, "neither finishes the confirm nor restarts it")
	// its replicas failed: the same (seed 29 state 163)
	s = confirmedWithoutEngine(vcL14a, "vol-cw")
	for _, r := range s.replicasOf(s.engA) {
		r.Spec.FailedAt = "2026-01-01T00:00:00Z"
	}
	if _, f := s.classify(t); f.Type == TypeConfirmWithoutEngine {
		t.Errorf("old engine's replicas failed: %s", f.Type)
	}
	// the active engine itself without a node: Longhorn places it on
	// spec.nodeID and finishes (explorer, seed 45 states 203, 1098, 1747,
	// 2370, 2723 on 1.4.3)
	s = confirmedWithoutEngine(vcL14a, "vol-cw")
	s.engine(s.engA).Spec.NodeID = ""
	if _, f := s.classify(t); f.Type == TypeConfirmWithoutEngine {
		t.Errorf("active engine not placed: %s", f.Type)
	}
	// 1.5+: status.currentMigrationNodeID keeps the migration going and
	// Longhorn places the engine itself (run on 1.5.3)
	s = confirmedWithoutEngine(vcL15f, "vol-cw")
	if _, f := s.classify(t); f.Type == TypeConfirmWithoutEngine {
		t.Errorf("1.5: %s", f.Type)
	}
	// not a migratable volume: processMigration never runs for it
	s = confirmedWithoutEngine(vcL14a, "vol-cw")
	s.volume().Spec.Migratable = false
	if _, f := s.classify(t); f.Type == TypeConfirmWithoutEngine {
		t.Errorf("not migratable: %s", f.Type)
	}
}

// TestFamilyTypesDistinct: every family state has a type of its own.
func TestFamilyTypesDistinct(t *testing.T) {
	seen := map[Type]bool{}
	for _, ty := range FamilyTypes {
		if seen[ty] {
			t.Errorf("type %s twice", ty)
		}
		seen[ty] = true
	}
	if len(seen) != 10 {
		t.Errorf("%d family types, want 10", len(seen))
	}
}

// TestWithoutNodeEnds: the state Longhorn 1.5.3's own controller leaves
// after the source engine crashed mid-migration (internal/realtest), and
// nothing else: a detached migratable volume, spec.migrationNodeID set,
// spec.nodeID empty, a csi ticket on each end; 1.5 and 1.6 only.
func TestWithoutNodeEnds(t *testing.T) {
	state := func(ver string, mutate func(*longhorn.Volume, *longhorn.VolumeAttachment)) (string, string) {
		v := &longhorn.Volume{}
		v.Name = "vol"
		v.Spec.Migratable, v.Spec.MigrationNodeID = true, nodeB
		v.Status.State = longhorn.VolumeStateDetached
		va := &longhorn.VolumeAttachment{}
		va.Spec.AttachmentTickets = map[string]longhorn.AttachmentTicket{}
		for _, n := range []string{nodeA, nodeB} {
			tk := csiTicket("vol", n)
			va.Spec.AttachmentTickets[tk.ID] = tk
		}
		if mutate != nil {
			mutate(v, va)
		}
		return WithoutNodeEnds(longhorn.MustParseVersion(ver), v, va)
	}
	for _, ver := range []string{"v1.5.3", "v1.6.2"} {
		if src, tgt := state(ver, nil); src != nodeA || tgt != nodeB {
			t.Errorf("%s: ends %q, %q, want %s, %s", ver, src, tgt, nodeA, nodeB)
		}
	}
	for name, tc := range map[string]struct {
		ver    string
		mutate func(*longhorn.Volume, *longhorn.VolumeAttachment)
	}{
		"1.4 has no tickets": {"v1.4.3", nil},
		"1.7 cancels it":     {"v1.7.0", nil},
		"attached":           {"v1.5.3", func(v *longhorn.Volume, _ *longhorn.VolumeAttachment) { v.Spec.NodeID = nodeA }},
		"still detaching":    {"v1.5.3", func(v *longhorn.Volume, _ *longhorn.VolumeAttachment) { v.Status.State = "detaching" }},
		"no migration":       {"v1.5.3", func(v *longhorn.Volume, _ *longhorn.VolumeAttachment) { v.Spec.MigrationNodeID = "" }},
		"not migratable":     {"v1.5.3", func(v *longhorn.Volume, _ *longhorn.VolumeAttachment) { v.Spec.Migratable = false }},
		"no ticket for the source": {"v1.5.3", func(_ *longhorn.Volume, va *longhorn.VolumeAttachment) {
			delete(va.Spec.AttachmentTickets, longhorn.CSITicketID("vol", nodeA))
		}},
		"no ticket for the target": {"v1.5.3", func(_ *longhorn.Volume, va *longhorn.VolumeAttachment) {
			delete(va.Spec.AttachmentTickets, longhorn.CSITicketID("vol", nodeB))
		}},
	} {
		if src, tgt := state(tc.ver, tc.mutate); src != "" || tgt != "" {
			t.Errorf("%s: ends %q, %q, want none", name, src, tgt)
		}
	}
}

// stepIndex is the index of the first step of f containing part, or -1.
func stepIndex(f Finding, part string) int {
	for i, st := range f.Family.Steps {
		if strings.Contains(st, part) {
			return i
		}
	}
	return -1
}

// Before 1.5, status.pendingNodeID apart from spec.nodeID: Longhorn
// re-attaches the volume on the pending node and it stays off spec.nodeID
// (explorer, seed 45 states 1996 and 2625 on 1.4.3).
func TestFamilyPendingNodeApart(t *testing.T) {
	s := healthy(vcL14a, "vol")
	s.volume().Status.PendingNodeID = nodeB
	if f := expectFamily(t, s, TypeLeftoverAttachRequest, true, "get volumes.longhorn.io vol -o yaml"); !strings.Contains(f.Reason, "attaches it again on node-b, not on spec.nodeID") {
		t.Errorf("reason: %s", f.Reason)
	}
	s.volume().Status.PendingNodeID = nodeA
	if _, f := s.classify(t); f.Type == TypeLeftoverAttachRequest {
		t.Errorf("pending on spec.nodeID: %s", f.Reason)
	}
}
