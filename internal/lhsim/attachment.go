package lhsim

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// memo is what the simulated mutating webhook last saw of a ticket.
type memo struct {
	content string
	gen     int64
}

// attacher priorities (LM GetAttacherPriorityLevel).
var attacherPriority = map[string]int{
	"volume-restore-controller": 2000, "volume-expansion-controller": 2000,
	longhorn.AttacherTypeLonghornAPI: 1000,
	longhorn.AttacherTypeCSI:         900, "salvage-controller": 900, "share-manager-controller": 900,
	"snapshot-controller": 800, "backup-controller": 800, "volume-clone-controller": 800,
	"volume-eviction-controller": 800, "bim-ds-controller": 800, "volume-rebuilding-controller": 800,
}

// newVolumeAttachment builds the VolumeAttachment Longhorn creates with a
// volume: named after it, label, owner reference, finalizer, no tickets.
func (s *Sim) newVolumeAttachment(vu *unstructured.Unstructured) *unstructured.Unstructured {
	u := newObject(longhorn.VolumeAttachments.Kind, s.ns, vu.GetName())
	u.SetLabels(map[string]string{longhorn.VolumeLabel: vu.GetName()})
	u.SetFinalizers([]string{longhorn.Finalizer})
	_ = unstructured.SetNestedSlice(u.Object, ownerRefs(vu), "metadata", "ownerReferences")
	u.Object["spec"] = map[string]any{"volume": vu.GetName(), "attachmentTickets": map[string]any{}}
	return u
}

// syncVolumeAttachment is the VolumeAttachment controller of 1.5+ (with the
// generation bookkeeping of its mutating webhook): tickets decide
// spec.nodeID and spec.migrationNodeID; the ticket statuses say whether
// each ticket is satisfied.
func (s *Sim) syncVolumeAttachment(ctx context.Context, vol string) error {
	vau, err := s.getU(ctx, longhorn.VolumeAttachments, vol)
	vu, verr := s.getU(ctx, longhorn.Volumes, vol)
	if isNotFound(err) {
		if verr == nil && vu.GetDeletionTimestamp() == nil {
			_, cerr := s.create(ctx, longhorn.VolumeAttachments, s.newVolumeAttachment(vu))
			if cerr != nil && !isAlreadyExists(cerr) {
				return cerr
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if vau.GetDeletionTimestamp() != nil {
		if hasFinalizer(vau) {
			vau.SetFinalizers(withoutFinalizer(vau))
			if _, err := s.update(ctx, longhorn.VolumeAttachments, vau); err != nil && !isNotFound(err) {
				return err
			}
		}
		return nil
	}
	if isNotFound(verr) {
		return nil
	}
	if verr != nil {
		return verr
	}
	va := &longhorn.VolumeAttachment{}
	if err := decode(vau, va); err != nil {
		return err
	}
	v := &longhorn.Volume{}
	if err := decode(vu, v); err != nil {
		return err
	}
	for id, t := range va.Spec.AttachmentTickets {
		if t.ID == "" {
			t.ID = id
			va.Spec.AttachmentTickets[id] = t
		}
	}

	if s.mutateTickets(vau, va) {
		nu, err := s.update(ctx, longhorn.VolumeAttachments, vau)
		if err != nil {
			return err
		}
		s.rememberTickets(nu.GetName(), va)
		return nil // the update event brings us back
	}
	s.rememberTickets(va.Name, va)

	origSpec := v.Spec
	origStatus := copyVAStatus(va.Status)

	s.vaDetach(va, v)
	s.vaAttach(va, v)
	s.vaMigration(ctx, va, v)
	s.vaStatus(ctx, va, v)

	if v.Spec != origSpec {
		_ = mergeInto(vu, "spec", map[string]any{
			"nodeID":          v.Spec.NodeID,
			"migrationNodeID": v.Spec.MigrationNodeID,
			"disableFrontend": v.Spec.DisableFrontend,
			"lastAttachedBy":  v.Spec.LastAttachedBy,
		})
		if _, err := s.update(ctx, longhorn.Volumes, vu); err != nil {
			return err
		}
	}
	if !reflect.DeepEqual(origStatus, va.Status) {
		if err := unstructured.SetNestedField(vau.Object, vaStatusToU(va.Status), "status", "attachmentTicketStatuses"); err != nil {
			return err
		}
		if _, err := s.updateStatus(ctx, longhorn.VolumeAttachments, vau); err != nil && !isNotFound(err) {
			return err
		}
	}
	return nil
}

func ticketContent(t longhorn.AttachmentTicket) string {
	t.Generation = 0
	data, _ := json.Marshal(t)
	return string(data)
}

// mutateTickets does what Longhorn's VolumeAttachment mutating webhook does
// on update, after the fact: a changed ticket gets generation+1, a new
// ticket whose id still has a status gets that status's generation+1. The
// first time a VolumeAttachment is seen its tickets are taken as they are.
func (s *Sim) mutateTickets(vau *unstructured.Unstructured, va *longhorn.VolumeAttachment) bool {
	s.mu.Lock()
	mem, known := s.tickets[va.Name]
	s.mu.Unlock()
	if !known {
		return false
	}
	changed := false
	for _, id := range longhorn.SortedKeys(va.Spec.AttachmentTickets) {
		t := va.Spec.AttachmentTickets[id]
		m, seen := mem[id]
		gen := t.Generation
		if !seen {
			if st, ok := va.Status.AttachmentTicketStatuses[id]; ok && gen <= st.Generation {
				gen = st.Generation + 1
			}
		} else if m.content != ticketContent(t) && gen <= m.gen {
			gen = m.gen + 1
		}
		if gen != t.Generation {
			t.Generation = gen
			va.Spec.AttachmentTickets[id] = t
			_ = unstructured.SetNestedField(vau.Object, gen, "spec", "attachmentTickets", id, "generation")
			changed = true
		}
	}
	return changed
}

func (s *Sim) rememberTickets(name string, va *longhorn.VolumeAttachment) {
	m := map[string]memo{}
	for id, t := range va.Spec.AttachmentTickets {
		m[id] = memo{content: ticketContent(t), gen: t.Generation}
	}
	s.mu.Lock()
	s.tickets[name] = m
	s.mu.Unlock()
}

func copyVAStatus(st longhorn.VolumeAttachmentStatus) longhorn.VolumeAttachmentStatus {
	out := longhorn.VolumeAttachmentStatus{}
	if st.AttachmentTicketStatuses != nil {
		out.AttachmentTicketStatuses = map[string]longhorn.AttachmentTicketStatus{}
		for k, v := range st.AttachmentTicketStatuses {
			v.Conditions = append([]longhorn.Condition(nil), v.Conditions...)
			out.AttachmentTicketStatuses[k] = v
		}
	}
	return out
}

func vaStatusToU(st longhorn.VolumeAttachmentStatus) map[string]any {
	out := map[string]any{}
	for id, ts := range st.AttachmentTicketStatuses {
		conds := []any{}
		for _, c := range ts.Conditions {
			conds = append(conds, map[string]any{
				"type": c.Type, "status": c.Status, "reason": c.Reason, "message": c.Message,
				"lastTransitionTime": c.LastTransitionTime, "lastProbeTime": c.LastProbeTime,
			})
		}
		out[id] = map[string]any{"id": id, "satisfied": ts.Satisfied, "conditions": conds, "generation": ts.Generation}
	}
	return out
}

func isMigratable(v *longhorn.Volume) bool {
	return v.Spec.Migratable && v.Spec.AccessMode == longhorn.AccessModeRWX
}

// csiOfRegularRWX: csi tickets of a non-migratable rwx volume belong to the
// share manager, not to this controller.
func csiOfRegularRWX(t longhorn.AttachmentTicket, v *longhorn.Volume) bool {
	return v.Spec.AccessMode == longhorn.AccessModeRWX && !v.Spec.Migratable && t.Type == longhorn.AttacherTypeCSI
}

func verifyAttachmentParameters(p map[string]string, v *longhorn.Volume) bool {
	switch df, ok := p["disableFrontend"]; {
	case !ok || df == "false":
		return !v.Spec.DisableFrontend
	case df == "true":
		return v.Spec.DisableFrontend
	}
	return true
}

func setAttachmentParameters(p map[string]string, v *longhorn.Volume) {
	switch df, ok := p["disableFrontend"]; {
	case !ok || df == "false":
		v.Spec.DisableFrontend = false
	case df == "true":
		v.Spec.DisableFrontend = true
	}
	v.Spec.LastAttachedBy = p["lastAttachedBy"]
}

func tickets(va *longhorn.VolumeAttachment) []longhorn.AttachmentTicket {
	out := make([]longhorn.AttachmentTicket, 0, len(va.Spec.AttachmentTickets))
	for _, id := range longhorn.SortedKeys(va.Spec.AttachmentTickets) {
		out = append(out, va.Spec.AttachmentTickets[id])
	}
	return out
}

// hasCSITicketFor: a csi ticket asks for node with parameters that fit.
func hasCSITicketFor(node string, va *longhorn.VolumeAttachment, v *longhorn.Volume, checkParams bool) bool {
	for _, t := range tickets(va) {
		if t.Type == longhorn.AttacherTypeCSI && t.NodeID == node && (!checkParams || verifyAttachmentParameters(t.Parameters, v)) {
			return true
		}
	}
	return false
}

func (s *Sim) valog(level string, va *longhorn.VolumeAttachment, v *longhorn.Volume, msg string, kv ...string) {
	kv = append(kv, "controller", "longhorn-volume-attachment", "longhornVolumeAttachment", va.Name, "node", v.Status.OwnerID)
	s.log(level, v.Name, msg, kv...)
}

func (s *Sim) vaDetach(va *longhorn.VolumeAttachment, v *longhorn.Volume) {
	if v.Spec.NodeID == "" || !s.shouldDoDetach(va, v) {
		return
	}
	v.Spec.NodeID = ""
	setAttachmentParameters(nil, v)
}

func (s *Sim) shouldDoDetach(va *longhorn.VolumeAttachment, v *longhorn.Volume) bool {
	if v.Status.Robustness == longhorn.RobustnessFaulted {
		return true
	}
	if isMigratable(v) && s.isMigrating(v) {
		// the migration handlers take care of it
		return false
	}
	for _, t := range tickets(va) {
		if csiOfRegularRWX(t, v) {
			continue
		}
		if t.NodeID == v.Spec.NodeID && verifyAttachmentParameters(t.Parameters, v) {
			return false
		}
	}
	return true
}

func (s *Sim) vaAttach(va *longhorn.VolumeAttachment, v *longhorn.Volume) {
	fullyDetached := v.Spec.NodeID == "" && v.Spec.MigrationNodeID == "" && v.Status.PendingNodeID == "" &&
		v.Status.State == longhorn.VolumeStateDetached
	if !fullyDetached || v.Status.Robustness == longhorn.RobustnessFaulted {
		return
	}
	var best *longhorn.AttachmentTicket
	bestPrio := 0
	for _, t := range tickets(va) {
		if csiOfRegularRWX(t, v) {
			continue
		}
		p := attacherPriority[t.Type]
		if best == nil || p > bestPrio || (p == bestPrio && t.ID < best.ID) {
			t := t
			best, bestPrio = &t, p
		}
	}
	if best == nil {
		return
	}
	v.Spec.NodeID = best.NodeID
	setAttachmentParameters(best.Parameters, v)
}

func (s *Sim) vaMigration(ctx context.Context, va *longhorn.VolumeAttachment, v *longhorn.Volume) {
	if !isMigratable(v) {
		return
	}
	v17 := s.ver.AtLeast(1, 7, 0)
	if v17 && v.Spec.NodeID == "" {
		if v.Spec.MigrationNodeID != "" {
			v.Spec.MigrationNodeID = ""
			s.valog("warning", va, v, "Cancelling migration for detached volume")
		}
		return
	}
	s.vaMigrationStart(ctx, va, v)
	s.vaMigrationConfirm(ctx, va, v, v17)
	if v.Spec.MigrationNodeID != "" && !hasCSITicketFor(v.Spec.MigrationNodeID, va, v, v17) {
		v.Spec.MigrationNodeID = ""
		s.valog("info", va, v, "Rolling back migration")
	}
}

func (s *Sim) vaMigrationStart(ctx context.Context, va *longhorn.VolumeAttachment, v *longhorn.Volume) {
	if s.isMigrating(v) || v.Status.State != longhorn.VolumeStateAttached || v.Status.CurrentNodeID != v.Spec.NodeID {
		return
	}
	if !hasCSITicketFor(v.Spec.NodeID, va, v, true) {
		return
	}
	for _, t := range tickets(va) {
		if t.Type != longhorn.AttacherTypeCSI || t.NodeID == v.Spec.NodeID {
			continue
		}
		if s.b.readyTarget && !s.nodeReady(ctx, t.NodeID) {
			s.valog("info", va, v, fmt.Sprintf("Pending migration attachment ticket %v: target node %v not ready", t.ID, t.NodeID))
			return
		}
		v.Spec.MigrationNodeID = t.NodeID
		s.valog("info", va, v, "Starting migration", "migrationNodeID", t.NodeID)
		return
	}
}

func (s *Sim) vaMigrationConfirm(ctx context.Context, va *longhorn.VolumeAttachment, v *longhorn.Volume, v17 bool) {
	target := v.Status.CurrentMigrationNodeID
	if target == "" {
		return
	}
	if hasCSITicketFor(v.Spec.NodeID, va, v, true) {
		return
	}
	if v17 {
		if !s.nodeReady(ctx, target) {
			v.Spec.NodeID = ""
			v.Spec.MigrationNodeID = ""
			s.valog("warning", va, v, "Detaching volume for attempted migration to down node")
			return
		}
		if !s.availableOn(ctx, v.Name, target) {
			s.valog("warning", va, v, "Waiting to confirm migration until migration engine is ready")
			return
		}
	}
	synced, err := s.snapshotsSynced(ctx, v)
	if err != nil {
		s.valog("warning", va, v, "Failed to check migrating engine snapshot status", "error", err.Error())
		if !v17 {
			return
		}
	}
	if !synced {
		if v17 {
			s.valog("warning", va, v, "Waiting to confirm migration until snapshots have synced")
		}
		return
	}
	v.Spec.NodeID = target
	v.Spec.MigrationNodeID = ""
	s.valog("info", va, v, "Confirming migration", "nodeID", target)
}

// snapshotsSynced compares the snapshot key sets of the active engine and
// the inactive engine on the migration node.
func (s *Sim) snapshotsSynced(ctx context.Context, v *longhorn.Volume) (bool, error) {
	es, err := s.enginesOf(ctx, v.Name)
	if err != nil {
		return false, err
	}
	var old, mig *longhorn.Engine
	for _, e := range es {
		if e.Spec.Active {
			old = e
			continue
		}
		if e.Spec.NodeID == v.Spec.MigrationNodeID {
			mig = e
		}
	}
	if old == nil {
		return false, fmt.Errorf("failed to find the active engine for volume %v", v.Name)
	}
	if mig == nil {
		return false, fmt.Errorf("failed to find the migrating engine for volume %v", v.Name)
	}
	if !reflect.DeepEqual(old.SnapshotNames(), mig.SnapshotNames()) {
		s.log("info", v.Name, fmt.Sprintf("Volume migration (%v) is in progress for synchronizing snapshots", v.Name))
		return false, nil
	}
	return true, nil
}

// availableOn is Longhorn's isVolumeAvailableOnNode.
func (s *Sim) availableOn(ctx context.Context, vol, node string) bool {
	es, err := s.enginesOf(ctx, vol)
	if err != nil {
		return false
	}
	for _, e := range es {
		if e.Spec.NodeID == node && e.Available() {
			return true
		}
	}
	return false
}

func setCondition(conds []longhorn.Condition, typ, status, reason, msg string) []longhorn.Condition {
	out := append([]longhorn.Condition(nil), conds...)
	for i := range out {
		if out[i].Type == typ {
			if out[i].Status != status {
				out[i].LastTransitionTime = time.Now().UTC().Format(time.RFC3339)
			}
			out[i].Status, out[i].Reason, out[i].Message = status, reason, msg
			return out
		}
	}
	return append(out, longhorn.Condition{Type: typ, Status: status, Reason: reason, Message: msg,
		LastTransitionTime: time.Now().UTC().Format(time.RFC3339)})
}

// vaStatus is handleVAStatusUpdate: drop statuses of removed tickets and
// decide, per ticket, whether it is satisfied.
func (s *Sim) vaStatus(ctx context.Context, va *longhorn.VolumeAttachment, v *longhorn.Volume) {
	if va.Status.AttachmentTicketStatuses == nil {
		va.Status.AttachmentTicketStatuses = map[string]longhorn.AttachmentTicketStatus{}
	}
	for id := range va.Status.AttachmentTicketStatuses {
		if _, ok := va.Spec.AttachmentTickets[id]; !ok {
			delete(va.Status.AttachmentTicketStatuses, id)
		}
	}
	for _, t := range tickets(va) {
		st := va.Status.AttachmentTicketStatuses[t.ID]
		st.ID = t.ID
		set := func(ok bool, reason, msg string) {
			st.Satisfied = ok
			status := "False"
			if ok {
				status = "True"
			}
			st.Conditions = setCondition(st.Conditions, "Satisfied", status, reason, msg)
		}
		switch {
		case csiOfRegularRWX(t, v):
			set(false, "", "Waiting for volume share to be available")
		case t.Type == longhorn.AttacherTypeCSI && isMigratable(v) && s.isMigrating(v) && t.NodeID == v.Status.CurrentMigrationNodeID:
			if s.availableOn(ctx, v.Name, t.NodeID) {
				set(true, "", "The migrating attachment ticket is satisfied")
			} else {
				set(false, "", fmt.Sprintf("waiting for volume to migrate to node %v", t.NodeID))
			}
		case v.Status.CurrentNodeID == "" || v.Status.State != longhorn.VolumeStateAttached:
			set(false, "", "")
		case t.NodeID != v.Status.CurrentNodeID:
			set(false, "", fmt.Sprintf("the volume is currently attached to different node %v ", v.Status.CurrentNodeID))
		case !verifyAttachmentParameters(t.Parameters, v):
			set(false, "AttachedWithIncompatibleParameters", fmt.Sprintf("volume %v has already attached to node %v with incompatible parameters", v.Name, v.Status.CurrentNodeID))
		default:
			set(true, "", "")
		}
		st.Generation = t.Generation
		va.Status.AttachmentTicketStatuses[t.ID] = st
	}
}
