package lhsim

import (
	"context"
	"errors"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// NodeOptions describe a node. The zero value is a Ready, schedulable node.
type NodeOptions struct {
	NotReady      bool // Ready condition False
	Unschedulable bool // spec.allowScheduling false, Schedulable condition False
}

// AddNode creates (or updates) a Longhorn Node with Ready and Schedulable
// conditions and one disk, and its instance manager(s): instance-manager-e-
// and instance-manager-r-<hash> up to 1.4, one aio instance-manager-<hash>
// from 1.5, whose process lists the simulator keeps up to date.
func (s *Sim) AddNode(ctx context.Context, name string, opts NodeOptions) error {
	disk := "default-disk-" + hexOf("disk/"+name, 8)
	u := newObject(longhorn.Nodes.Kind, s.ns, name)
	u.Object["spec"] = map[string]any{
		"name":              name,
		"allowScheduling":   !opts.Unschedulable,
		"evictionRequested": false,
		"tags":              []any{},
		"disks": map[string]any{disk: map[string]any{
			"path": defaultDiskPath, "allowScheduling": true, "evictionRequested": false,
			"storageReserved": int64(0), "tags": []any{}, "diskType": "filesystem",
		}},
	}
	if _, err := s.create(ctx, longhorn.Nodes, u); err != nil && !isAlreadyExists(err) {
		return fmt.Errorf("lhsim: create node %s: %w", name, err)
	}
	if err := s.setNodeStatus(ctx, name, !opts.NotReady, !opts.Unschedulable, disk); err != nil {
		return err
	}
	kinds := []string{"aio"}
	if !s.b.aioIM {
		kinds = []string{procEngine, procReplica}
	}
	for _, kind := range kinds {
		imName := s.imName(name, kind)
		im := newObject(longhorn.InstanceManagers.Kind, s.ns, imName)
		labels := map[string]string{
			"longhorn.io/managed-by":             "longhorn-manager",
			"longhorn.io/component":              "instance-manager",
			"longhorn.io/instance-manager-type":  kind,
			"longhorn.io/node":                   name,
			"longhorn.io/instance-manager-image": imageChecksumName(s.imImage()),
		}
		if s.b.dataEngineField == "dataEngine" {
			// 1.6+ also select a node's instance manager by data engine
			labels["longhorn.io/data-engine"] = longhorn.DataEngineV1
		}
		im.SetLabels(labels)
		spec := map[string]any{"nodeID": name, "type": kind, "image": s.imImage()}
		if s.b.dataEngineField != "" {
			spec[s.b.dataEngineField] = longhorn.DataEngineV1
		}
		im.Object["spec"] = spec
		if _, err := s.create(ctx, longhorn.InstanceManagers, im); err != nil && !isAlreadyExists(err) {
			return fmt.Errorf("lhsim: create instance manager %s: %w", imName, err)
		}
	}
	if s.instanceOnly && s.queue != nil {
		if err := s.writeEngineImage(ctx); err != nil {
			return err
		}
	}
	// the instance-manager sync writes the status
	if s.queue != nil {
		s.enqueue(keyIM)
	}
	return nil
}

// SetNodeReady flips a node's Ready condition.
func (s *Sim) SetNodeReady(ctx context.Context, name string, ready bool) error {
	n, err := liveAs[longhorn.Node](ctx, s, longhorn.Nodes, name)
	if err != nil {
		return fmt.Errorf("lhsim: %w", err)
	}
	return s.setNodeStatus(ctx, name, ready, n.Schedulable(), "")
}

func (s *Sim) setNodeStatus(ctx context.Context, name string, ready, schedulable bool, disk string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := s.getLive(ctx, longhorn.Nodes, name)
		if err != nil {
			return err
		}
		cond := func(typ string, ok bool, reason, msg string) map[string]any {
			st := "False"
			if ok {
				st, reason, msg = "True", "", ""
			}
			return map[string]any{"type": typ, "status": st, "reason": reason, "message": msg,
				"lastTransitionTime": now(), "lastProbeTime": ""}
		}
		status := nestedMap(u, "status")
		status["conditions"] = []any{
			cond("Ready", ready, "KubernetesNodeNotReady", fmt.Sprintf("Kubernetes node %v not ready", name)),
			cond("Schedulable", schedulable, "KubernetesNodeCordoned", fmt.Sprintf("Node %v is cordoned", name)),
		}
		if disk != "" {
			status["diskStatus"] = map[string]any{disk: map[string]any{
				"diskUUID": diskID(name), "storageMaximum": int64(100 << 30), "storageAvailable": int64(90 << 30),
				"conditions": []any{cond("Ready", true, "", ""), cond("Schedulable", true, "", "")},
			}}
		}
		status["region"], status["zone"] = "", ""
		_ = unstructured.SetNestedMap(u.Object, status, "status")
		_, err = s.updateStatus(ctx, longhorn.Nodes, u)
		return err
	})
}

// VolumeOptions describe a volume for CreateVolume.
type VolumeOptions struct {
	// Migratable makes a live-migratable volume: spec.migratable true and
	// accessMode rwx. Otherwise the volume is rwo.
	Migratable bool
	// Replicas is spec.numberOfReplicas; default len(ReplicaNodes), or 2.
	Replicas int
	// ReplicaNodes places the replicas, one per node; default: the Ready,
	// schedulable nodes by name, up to Replicas.
	ReplicaNodes []string
	// DataEngine is v1 (default) or v2; written only on releases that have
	// the field (backendStoreDriver in 1.5, dataEngine from 1.6).
	DataEngine string
	// Size in bytes as a decimal string; default 1 GiB.
	Size string
	// Frontend defaults to blockdev.
	Frontend string
}

// CreateVolume creates a Volume as Longhorn's API or CSI driver would, with
// its VolumeAttachment on 1.5+. The volume controller then creates the
// engine (stopped) and the replicas, and the volume becomes detached.
func (s *Sim) CreateVolume(ctx context.Context, name string, opts VolumeOptions) error {
	n := opts.Replicas
	if n == 0 {
		n = len(opts.ReplicaNodes)
	}
	if n == 0 {
		n = 2
	}
	size := opts.Size
	if size == "" {
		size = defaultSize
	}
	frontend := opts.Frontend
	if frontend == "" {
		frontend = "blockdev"
	}
	access := longhorn.AccessModeRWO
	if opts.Migratable {
		access = longhorn.AccessModeRWX
	}
	spec := map[string]any{
		"size":                size,
		"numberOfReplicas":    int64(n),
		"frontend":            frontend,
		"migratable":          opts.Migratable,
		"accessMode":          access,
		"nodeID":              "",
		"migrationNodeID":     "",
		"disableFrontend":     false,
		"lastAttachedBy":      "",
		"staleReplicaTimeout": int64(30),
		"dataLocality":        "disabled",
		"Standby":             false,
	}
	maps.Copy(spec, volumeDefaults(s.ver))
	s.setEngineFields(spec, s.engineImage(), opts.DataEngine)
	u := newObject(longhorn.Volumes.Kind, s.ns, name)
	u.SetLabels(map[string]string{longhorn.VolumeLabel: name})
	u.SetFinalizers([]string{longhorn.Finalizer})
	u.Object["spec"] = spec
	s.mu.Lock()
	s.placement[name] = append([]string(nil), opts.ReplicaNodes...)
	s.mu.Unlock()
	vu, err := s.create(ctx, longhorn.Volumes, u)
	if err != nil {
		return fmt.Errorf("lhsim: create volume %s: %w", name, err)
	}
	if s.b.va {
		_, err := s.create(ctx, longhorn.VolumeAttachments, s.newVolumeAttachment(vu))
		if err != nil && !isAlreadyExists(err) {
			return fmt.Errorf("lhsim: create volume attachment %s: %w", name, err)
		}
	}
	return nil
}

// Attach does what the CSI driver does to attach vol to node.
//
// Up to 1.4 that is the REST API's attach: spec.nodeID=node on a detached
// volume; on a migratable volume attached elsewhere, spec.migrationNodeID=node
// after the API's checks (attached, healthy or degraded, no upgrade, node
// Ready, ...). From 1.5 it adds a csi-attacher ticket (id
// longhorn.CSITicketID) to the volume's VolumeAttachment; from 1.7 the
// webhook's ticket-count rules apply.
func (s *Sim) Attach(ctx context.Context, vol, node string) error {
	if s.b.va {
		return s.addTicket(ctx, vol, node)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		return s.restAttach(ctx, vol, node)
	})
}

// Detach does what the CSI driver does to detach vol from node.
//
// Up to 1.4 that is the REST API's detach: while migrating, node = the
// current spec.nodeID confirms the migration (refused with "migration is not
// ready yet" unless both engines are available with the same snapshots),
// node = the migration node rolls it back; otherwise it detaches. From 1.5
// it removes node's csi-attacher ticket.
func (s *Sim) Detach(ctx context.Context, vol, node string) error {
	if s.b.va {
		return s.removeTicket(ctx, vol, node)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		return s.restDetach(ctx, vol, node)
	})
}

func (s *Sim) restAttach(ctx context.Context, vol, node string) error {
	wrap := func(err error) error { return fmt.Errorf("unable to attach volume %v to %v: %w", vol, node, err) }
	n, err := liveAs[longhorn.Node](ctx, s, longhorn.Nodes, node)
	if err != nil {
		return wrap(err)
	}
	if !n.Ready() {
		return wrap(fmt.Errorf("node %v is not ready, couldn't attach volume %v to it", node, vol))
	}
	vu, v, err := s.liveVolume(ctx, vol)
	if err != nil {
		return wrap(err)
	}
	if v.Spec.NodeID == node || v.Spec.MigrationNodeID == node {
		return nil
	}
	if v.Spec.AccessMode != longhorn.AccessModeRWX && v.Status.State != longhorn.VolumeStateDetached {
		return wrap(fmt.Errorf("invalid state %v to attach RWO volume %v", v.Status.State, vol))
	}
	shared := v.Spec.AccessMode == longhorn.AccessModeRWX && !v.Spec.Migratable
	switch {
	case v.Spec.NodeID == "":
		if shared {
			return nil // served by the share manager, which is not simulated
		}
		v.Spec.NodeID = node
	case shared:
		return nil
	default:
		if !v.Spec.Migratable {
			return wrap(fmt.Errorf("non migratable volume %v cannot attach to node %v is already attached to node %v", vol, node, v.Spec.NodeID))
		}
		if v.Spec.MigrationNodeID != "" && v.Spec.MigrationNodeID != node {
			return wrap(fmt.Errorf("unable to migrate volume %v from %v to %v since it's already migrating to %v", vol, v.Spec.NodeID, node, v.Spec.MigrationNodeID))
		}
		if v.Status.State != longhorn.VolumeStateAttached {
			return wrap(fmt.Errorf("invalid volume state to start migration %v", v.Status.State))
		}
		if !v.RobustnessUsable() {
			return wrap(errors.New("volume must be healthy or degraded to start migration"))
		}
		if v.WantedImage() != v.Status.CurrentImage {
			return wrap(errors.New("upgrading in process for volume, cannot start migration"))
		}
		if v.Spec.Standby || v.Status.IsStandby {
			return wrap(errors.New("dr volume migration is not supported"))
		}
		if v.Status.ExpansionRequired {
			return wrap(errors.New("cannot migrate volume while an expansion is required"))
		}
		v.Spec.MigrationNodeID = node
	}
	return s.writeVolumeSpec(ctx, vu, v.Spec.NodeID, v.Spec.MigrationNodeID)
}

func (s *Sim) restDetach(ctx context.Context, vol, node string) error {
	wrap := func(err error) error { return fmt.Errorf("unable to detach volume %v: %w", vol, err) }
	vu, v, err := s.liveVolume(ctx, vol)
	if err != nil {
		return wrap(err)
	}
	if v.Status.IsStandby {
		return wrap(fmt.Errorf("cannot detach standby volume %v", vol))
	}
	if v.Spec.NodeID == "" && v.Spec.MigrationNodeID == "" {
		return nil
	}
	if v.Spec.AccessMode == longhorn.AccessModeRWX && !v.Spec.Migratable && !v.Spec.DisableFrontend {
		return nil
	}
	if node != "" && node != v.Spec.NodeID && node != v.Spec.MigrationNodeID {
		return nil
	}
	migrating := v.Spec.Migratable && v.Spec.MigrationNodeID != "" && v.Spec.NodeID != ""
	switch {
	case migrating && node == v.Spec.NodeID:
		synced, err := s.snapshotsSynced(ctx, v)
		if err != nil {
			return wrap(err)
		}
		if !s.availableOn(ctx, vol, v.Spec.MigrationNodeID) || !s.availableOn(ctx, vol, v.Spec.NodeID) || !synced {
			return wrap(errors.New("migration is not ready yet"))
		}
		v.Spec.NodeID, v.Spec.MigrationNodeID = v.Spec.MigrationNodeID, ""
	case migrating && node == v.Spec.MigrationNodeID:
		v.Spec.MigrationNodeID = ""
	default:
		v.Spec.NodeID, v.Spec.MigrationNodeID = "", ""
	}
	return s.writeVolumeSpec(ctx, vu, v.Spec.NodeID, v.Spec.MigrationNodeID)
}

func (s *Sim) writeVolumeSpec(ctx context.Context, vu *unstructured.Unstructured, nodeID, migrationNodeID string) error {
	_ = unstructured.SetNestedField(vu.Object, nodeID, "spec", "nodeID")
	_ = unstructured.SetNestedField(vu.Object, migrationNodeID, "spec", "migrationNodeID")
	_ = unstructured.SetNestedField(vu.Object, false, "spec", "disableFrontend")
	_, err := s.update(ctx, longhorn.Volumes, vu)
	return err
}

// addTicket adds node's csi-attacher ticket, creating the VolumeAttachment
// if the volume has none yet.
func (s *Sim) addTicket(ctx context.Context, vol, node string) error {
	id := longhorn.CSITicketID(vol, node)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vau, err := s.getLive(ctx, longhorn.VolumeAttachments, vol)
		create := false
		if isNotFound(err) {
			vu, verr := s.getLive(ctx, longhorn.Volumes, vol)
			if verr != nil {
				return fmt.Errorf("lhsim: attach %s: %w", vol, verr)
			}
			vau, create = s.newVolumeAttachment(vu), true
		} else if err != nil {
			return err
		}
		va := &longhorn.VolumeAttachment{}
		if err := decode(vau, va); err != nil {
			return err
		}
		if _, ok := va.Spec.AttachmentTickets[id]; ok {
			return nil
		}
		if s.b.ticketLimits {
			if err := s.checkTicketLimits(ctx, vol, va); err != nil {
				return err
			}
		}
		ticket := map[string]any{
			"id": id, "type": longhorn.AttacherTypeCSI, "nodeID": node,
			"parameters": map[string]any{"disableFrontend": "false", "lastAttachedBy": ""},
		}
		if err := unstructured.SetNestedField(vau.Object, ticket, "spec", "attachmentTickets", id); err != nil {
			return err
		}
		if create {
			_, err = s.create(ctx, longhorn.VolumeAttachments, vau)
			if isAlreadyExists(err) {
				// the controller created it meanwhile: start over
				return apierrors.NewConflict(longhorn.VolumeAttachments.GVR().GroupResource(), vol, err)
			}
			return err
		}
		_, err = s.update(ctx, longhorn.VolumeAttachments, vau)
		return err
	})
}

// checkTicketLimits is the 1.7+ validating webhook's rule for a migratable
// volume (v1.10.0 verifyTicketCountForMigratableVolume): it counts every
// attachment ticket, whatever its type, in the VolumeAttachment as updated.
func (s *Sim) checkTicketLimits(ctx context.Context, vol string, va *longhorn.VolumeAttachment) error {
	v, err := liveAs[longhorn.Volume](ctx, s, longhorn.Volumes, vol)
	if err != nil {
		return err
	}
	if !isMigratable(v) {
		return nil
	}
	n := len(va.Spec.AttachmentTickets) + 1 // with the ticket being added
	if n > 2 {
		return fmt.Errorf("admission webhook denied the request: cannot attach migratable volume %v to more than two nodes", vol)
	}
	if n == 2 && v.Status.State != longhorn.VolumeStateAttached {
		return fmt.Errorf("admission webhook denied the request: cannot attach migratable volume %v to a second node while it is in state %v", vol, v.Status.State)
	}
	return nil
}

func (s *Sim) removeTicket(ctx context.Context, vol, node string) error {
	id := longhorn.CSITicketID(vol, node)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vau, err := s.getLive(ctx, longhorn.VolumeAttachments, vol)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, ok, _ := unstructured.NestedMap(vau.Object, "spec", "attachmentTickets", id); !ok {
			return nil
		}
		unstructured.RemoveNestedField(vau.Object, "spec", "attachmentTickets", id)
		_, err = s.update(ctx, longhorn.VolumeAttachments, vau)
		return err
	})
}
