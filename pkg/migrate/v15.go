package migrate

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// v15Driver drives Longhorn 1.5 and later, where the VolumeAttachment
// controller owns spec.nodeID and spec.migrationNodeID (direct writes are
// undone) and only csi-attacher tickets drive a migration: start = add a
// csi-attacher ticket for B, confirm = remove A's csi tickets, rollback =
// remove B's. The ticket id is the one the CSI driver would use for B, so a
// later Kubernetes attach to B finds it. generation is left to Longhorn's
// webhook.
type v15Driver struct{}

func (v15Driver) mechanism() string {
	return "csi-attacher tickets of the volume's longhorn.io VolumeAttachment"
}

func (v15Driver) start(s *snapshot, to string) (write, error) {
	if s.va == nil {
		return write{}, fmt.Errorf("volume %s has no %s", s.volume.Name, longhorn.VolumeAttachments.GroupResource())
	}
	id := longhorn.CSITicketID(s.volume.Name, to)
	params := map[string]any{"disableFrontend": "false", "lastAttachedBy": ""}
	// B's ticket asks for what A's does: the CSI driver would send the same.
	if a := s.csiTicketsOn(s.volume.Spec.NodeID); len(a) > 0 {
		for k, v := range a[0].Parameters {
			params[k] = v
		}
	}
	ticket := map[string]any{"id": id, "type": longhorn.AttacherTypeCSI, "nodeID": to, "parameters": params}
	return write{
		res: longhorn.VolumeAttachments, name: s.va.Name, resourceVersion: s.va.ResourceVersion,
		body: map[string]any{"spec": map[string]any{"attachmentTickets": map[string]any{id: ticket}}},
		what: fmt.Sprintf("add csi-attacher ticket %s for node %s to volumeattachment %s", id, to, s.va.Name),
	}, nil
}

func (d v15Driver) confirm(s *snapshot, to string) (write, error) {
	from := s.volume.Spec.NodeID
	if from == "" || from == to {
		return write{}, fmt.Errorf("volume %s has spec.nodeID=%q: no ticket of the old node to remove", s.volume.Name, from)
	}
	return d.remove(s, from, "confirm")
}

func (d v15Driver) rollback(s *snapshot, to string) (write, error) {
	if len(s.csiTicketsOn(to)) == 0 {
		return write{}, errNothingToRollBack
	}
	return d.remove(s, to, "rollback")
}

// remove deletes every csi-attacher ticket of node (a JSON merge patch sets
// the map entries to null).
func (v15Driver) remove(s *snapshot, node, why string) (write, error) {
	ts := s.csiTicketsOn(node)
	if len(ts) == 0 {
		return write{}, fmt.Errorf("%s: volumeattachment %s has no csi-attacher ticket for node %s", why, s.volume.Name, node)
	}
	tickets := map[string]any{}
	var ids []string
	for _, t := range ts {
		tickets[t.ID] = nil
		ids = append(ids, t.ID)
	}
	return write{
		res: longhorn.VolumeAttachments, name: s.va.Name, resourceVersion: s.va.ResourceVersion,
		body: map[string]any{"spec": map[string]any{"attachmentTickets": tickets}},
		what: fmt.Sprintf("remove csi-attacher ticket %s of node %s from volumeattachment %s", strings.Join(ids, ", "), node, s.va.Name),
	}, nil
}

func (v15Driver) started(s *snapshot, to string) (bool, string) {
	v := &s.volume
	switch {
	case len(s.csiTicketsOn(to)) == 0:
		return false, "no csi-attacher ticket for " + to
	case v.Spec.MigrationNodeID != to || v.Status.CurrentMigrationNodeID != to:
		msg := fmt.Sprintf("spec.migrationNodeID=%q status.currentMigrationNodeID=%q", v.Spec.MigrationNodeID, v.Status.CurrentMigrationNodeID)
		if m := s.ticketMessage(to); m != "" {
			msg += "; ticket: " + m
		}
		return false, msg
	}
	return true, ""
}

func (v15Driver) pending(s *snapshot, to string) bool {
	return len(s.csiTicketsOn(to)) > 0 && s.volume.Spec.NodeID != to
}

// confirmed: Longhorn has taken the confirm on board, or finished it. A
// detached volume (spec.nodeID empty: Longhorn detached it after the source
// engine or node was lost) is never confirmed, though no ticket names node "".
func (v15Driver) confirmed(s *snapshot, to string) bool {
	from := s.volume.Spec.NodeID
	if from == "" || to == "" {
		return false
	}
	if from == to {
		return true
	}
	return len(s.csiTicketsOn(from)) == 0 && len(s.csiTicketsOn(to)) > 0
}
