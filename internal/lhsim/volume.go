package lhsim

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// syncVolume is longhorn-manager's VolumeController.syncVolume, reduced to
// what matters for attachment and live migration, step for step:
// ReconcileEngineReplicaState, processMigration, ReconcileVolumeState,
// cleanupReplicas, and the deferred save of every changed replica spec,
// then engine spec, then the volume status, which runs even when a step
// returned early with an error.
func (s *Sim) syncVolume(ctx context.Context, name string) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("failed to sync %s/%s: %w", s.ns, name, err)
		}
	}()
	vu, v, err := getAs[longhorn.Volume](ctx, s, longhorn.Volumes, name)
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}

	if owner := s.pickOwner(ctx, v); owner != v.Status.OwnerID {
		v.Status.OwnerID = owner
		if err := unstructured.SetNestedField(vu.Object, owner, "status", "ownerID"); err != nil {
			return err
		}
		nu, err := s.updateStatus(ctx, longhorn.Volumes, vu)
		if err != nil {
			if isConflict(err) {
				// we don't mind others coming first
				return nil
			}
			return err
		}
		vu = nu
		s.vlog("debug", v, "Volume got new owner "+owner)
	}

	es, rs, err := s.loadVolumeObjects(ctx, name)
	if err != nil {
		return err
	}

	if v.DeletionTimestamp != nil {
		return s.deleteVolume(ctx, vu, v, es, rs)
	}

	origStatus := v.Status
	defer func() {
		var lastErr error
		for _, n := range longhorn.SortedKeys(rs) {
			if r := rs[n]; r.changed() {
				if uerr := s.updateReplica(ctx, r); uerr != nil {
					lastErr = uerr
				}
			}
		}
		// stop updating if replicas weren't fully updated
		if lastErr == nil {
			for _, n := range longhorn.SortedKeys(es) {
				if e := es[n]; e.changed() {
					if uerr := s.updateEngine(ctx, e, es); uerr != nil {
						lastErr = uerr
					}
				}
			}
		}
		// stop updating if engines and replicas weren't fully updated; note
		// that the volume status write reuses err, as Longhorn's does
		if lastErr == nil && !reflect.DeepEqual(origStatus, v.Status) {
			err = s.updateVolumeStatus(ctx, vu, v)
		}
		if isConflict(err) || isConflict(lastErr) {
			s.enqueue(key(kindVolume, name))
			err = nil
		}
	}()

	if err := s.reconcileEngineReplicaState(v, es, rs); err != nil {
		return err
	}
	if err := s.processMigration(ctx, vu, v, es, rs); err != nil {
		return err
	}
	if err := s.reconcileVolumeState(ctx, vu, v, es, rs); err != nil {
		return err
	}
	return s.cleanupReplicas(ctx, v, es, rs)
}

func (s *Sim) loadVolumeObjects(ctx context.Context, vol string) (map[string]*engineObj, map[string]*replicaObj, error) {
	eus, err := s.listOf(ctx, longhorn.Engines, vol)
	if err != nil {
		return nil, nil, err
	}
	rus, err := s.listOf(ctx, longhorn.Replicas, vol)
	if err != nil {
		return nil, nil, err
	}
	es := map[string]*engineObj{}
	for i := range eus {
		o, err := newEngineObj(&eus[i])
		if err != nil {
			return nil, nil, err
		}
		es[o.e.Name] = o
	}
	rs := map[string]*replicaObj{}
	for i := range rus {
		o, err := newReplicaObj(&rus[i])
		if err != nil {
			return nil, nil, err
		}
		rs[o.r.Name] = o
	}
	return es, rs, nil
}

// pickOwner is the node whose longhorn-manager would own the volume: the
// node it should be attached to when that node is up, else the current
// owner when up, else the first Ready node.
func (s *Sim) pickOwner(ctx context.Context, v *longhorn.Volume) string {
	if v.Spec.NodeID != "" && s.nodeReady(ctx, v.Spec.NodeID) {
		return v.Spec.NodeID
	}
	if v.Status.OwnerID != "" && s.nodeReady(ctx, v.Status.OwnerID) {
		return v.Status.OwnerID
	}
	nodes, err := s.listU(ctx, longhorn.Nodes)
	if err == nil {
		for i := range nodes {
			n := &longhorn.Node{}
			if decode(&nodes[i], n) == nil && n.Ready() {
				return n.Name
			}
		}
	}
	return v.Status.OwnerID
}

func (s *Sim) updateVolumeStatus(ctx context.Context, vu *unstructured.Unstructured, v *longhorn.Volume) error {
	st := map[string]any{
		"ownerID":          v.Status.OwnerID,
		"state":            v.Status.State,
		"robustness":       v.Status.Robustness,
		"currentNodeID":    v.Status.CurrentNodeID,
		"currentImage":     v.Status.CurrentImage,
		"pendingNodeID":    v.Status.PendingNodeID,
		"frontendDisabled": v.Status.FrontendDisabled,
	}
	if s.b.cmn {
		st["currentMigrationNodeID"] = v.Status.CurrentMigrationNodeID
	}
	u := vu.DeepCopy()
	if err := mergeInto(u, "status", st); err != nil {
		return err
	}
	_, err := s.updateStatus(ctx, longhorn.Volumes, u)
	return err
}

// updateEngine writes an engine's spec (Longhorn's datastore UpdateEngine).
func (s *Sim) updateEngine(ctx context.Context, o *engineObj, es map[string]*engineObj) error {
	if s.fire(FailEngineUpdate, o.e, func() []*longhorn.Engine { return engList(es, o) }) {
		return injectedConflict(o.e.Name)
	}
	u := o.u.DeepCopy()
	engineSpecInto(u, o.e)
	nu, err := s.update(ctx, longhorn.Engines, u)
	if err != nil {
		return err
	}
	o.u = nu
	spec := o.e.Spec
	spec.ReplicaAddressMap = copyMap(o.e.Spec.ReplicaAddressMap)
	o.orig = &spec
	return nil
}

func (s *Sim) updateReplica(ctx context.Context, o *replicaObj) error {
	u := o.u.DeepCopy()
	replicaSpecInto(u, o.r)
	nu, err := s.update(ctx, longhorn.Replicas, u)
	if err != nil {
		return err
	}
	o.u = nu
	spec := o.r.Spec
	o.orig = &spec
	return nil
}

// engList returns the engines in es plus extra (which may have left es).
func engList(es map[string]*engineObj, extra *engineObj) []*longhorn.Engine {
	out := make([]*longhorn.Engine, 0, len(es)+1)
	seen := false
	for _, n := range longhorn.SortedKeys(es) {
		out = append(out, es[n].e)
		if extra != nil && n == extra.e.Name {
			seen = true
		}
	}
	if extra != nil && !seen {
		out = append(out, extra.e)
	}
	return out
}

// deleteEngine is Longhorn's: update the engine first to keep its fields up
// to date, then delete it, then forget it so the deferred save skips it.
func (s *Sim) deleteEngine(ctx context.Context, o *engineObj, es map[string]*engineObj) error {
	if err := s.updateEngine(ctx, o, es); err != nil {
		return err
	}
	if s.fire(FailEngineDelete, o.e, func() []*longhorn.Engine { return engList(es, o) }) {
		return injectedDeleteError(o.e.Name)
	}
	err := s.del(ctx, longhorn.Engines, o.e.Name)
	if err != nil && !isNotFound(err) {
		return err
	}
	delete(es, o.e.Name)
	return nil
}

func (s *Sim) deleteReplica(ctx context.Context, o *replicaObj, rs map[string]*replicaObj) error {
	if err := s.updateReplica(ctx, o); err != nil {
		return err
	}
	err := s.del(ctx, longhorn.Replicas, o.r.Name)
	if err != nil && !isNotFound(err) {
		return err
	}
	delete(rs, o.r.Name)
	return nil
}

func (s *Sim) isMigrating(v *longhorn.Volume) bool {
	return v.Spec.MigrationNodeID != "" || (s.b.cmn && v.Status.CurrentMigrationNodeID != "")
}

func (s *Sim) isUpgrading(v *longhorn.Volume) bool {
	return v.Status.CurrentImage != v.WantedImage()
}

// getCurrentEngineAndExtras is Longhorn's GetCurrentEngineAndExtras: the
// one engine with spec.active (deletionTimestamp is not looked at), or,
// when none is active, the engine GetNewCurrentEngineAndExtras picks.
func (s *Sim) getCurrentEngineAndExtras(v *longhorn.Volume, es map[string]*engineObj) (*engineObj, []*engineObj, error) {
	var cur *engineObj
	var extras []*engineObj
	for _, n := range longhorn.SortedKeys(es) {
		e := es[n]
		if e.e.Spec.Active {
			if cur != nil {
				return nil, nil, fmt.Errorf("BUG: found the second active engine %v besides %v", e.e.Name, cur.e.Name)
			}
			cur = e
		} else {
			extras = append(extras, e)
		}
	}
	if cur == nil {
		s.log("warning", v.Name, fmt.Sprintf("failed to directly pick up the current one from multiple engines for volume %v, fall back to detect the new current engine, current node %v, desire node %v",
			v.Name, v.Status.CurrentNodeID, v.Spec.NodeID))
		c, ex, err := s.getNewCurrentEngineAndExtras(v, es)
		if err != nil {
			return nil, nil, err
		}
		if !s.b.affected {
			c.e.Spec.Active = true
		}
		return c, ex, nil
	}
	return cur, extras, nil
}

// getNewCurrentEngineAndExtras is Longhorn's GetNewCurrentEngineAndExtras:
// the engine on spec.nodeID, status.currentNodeID or status.pendingNodeID.
// On affected releases it marks that engine active, in memory, right here:
// the root of #6642.
func (s *Sim) getNewCurrentEngineAndExtras(v *longhorn.Volume, es map[string]*engineObj) (*engineObj, []*engineObj, error) {
	var cur *engineObj
	var extras []*engineObj
	oldName := ""
	for _, n := range longhorn.SortedKeys(es) {
		e := es[n]
		if e.e.Spec.Active {
			oldName = e.e.Name
		}
		node := e.e.Spec.NodeID
		if (v.Spec.NodeID != "" && v.Spec.NodeID == node) ||
			(v.Status.CurrentNodeID != "" && v.Status.CurrentNodeID == node) ||
			(v.Status.PendingNodeID != "" && v.Status.PendingNodeID == node) {
			if cur != nil {
				return nil, nil, fmt.Errorf("BUG: found the second new active engine %v besides %v", e.e.Name, cur.e.Name)
			}
			cur = e
			if s.b.affected {
				cur.e.Spec.Active = true
			}
		} else {
			extras = append(extras, e)
		}
	}
	if cur == nil {
		return nil, nil, fmt.Errorf("cannot find the current engine for the switching after iterating and cleaning up all engines for volume %v, all engines may be detached or in a transient state", v.Name)
	}
	if cur.e.Name != oldName {
		s.log("info", v.Name, fmt.Sprintf("Found the new current engine %v for volume %v, the old one is %v", cur.e.Name, v.Name, oldName))
	} else {
		s.log("info", v.Name, fmt.Sprintf("The current engine for volume %v is still %v", v.Name, cur.e.Name))
	}
	return cur, extras, nil
}

func (s *Sim) pickCurrentEngine(v *longhorn.Volume, es map[string]*engineObj) (*engineObj, error) {
	if len(es) == 0 {
		return nil, nil
	}
	cur, _, err := s.getCurrentEngineAndExtras(v, es)
	return cur, err
}

// reconcileEngineReplicaState: pick the current engine (this is where two
// active engines fail every sync), then mark replicas failed or healthy
// from its replicaModeMap and derive the robustness.
func (s *Sim) reconcileEngineReplicaState(v *longhorn.Volume, es map[string]*engineObj, rs map[string]*replicaObj) error {
	cur, err := s.pickCurrentEngine(v, es)
	if err != nil {
		return fmt.Errorf("failed to reconcile engine/replica state for %v: %w", v.Name, err)
	}
	if cur == nil {
		return nil
	}
	e := cur.e
	if e.Status.CurrentState == longhorn.StateUnknown {
		v.Status.Robustness = longhorn.RobustnessUnknown
		return nil
	}
	if e.Status.CurrentState != longhorn.StateRunning || e.Status.ReplicaModeMap == nil {
		return nil
	}
	healthy := 0
	for _, rName := range longhorn.SortedKeys(e.Status.ReplicaModeMap) {
		r := rs[rName]
		if r == nil {
			continue
		}
		switch e.Status.ReplicaModeMap[rName] {
		case longhorn.ModeERR:
			if r.r.Spec.FailedAt == "" {
				s.vlog("warning", v, fmt.Sprintf("Replica %v is marked as failed, current state %v, mode %v, engine name %v, active %v",
					rName, r.r.Status.CurrentState, longhorn.ModeERR, r.r.Spec.EngineName, r.r.Spec.Active))
				r.r.Spec.FailedAt = now()
			}
			r.r.Spec.DesireState = longhorn.StateStopped
		case longhorn.ModeRW:
			if r.r.Spec.HealthyAt == "" {
				r.r.Spec.HealthyAt = now()
			}
			healthy++
		}
	}
	if healthy == 0 {
		// ReconcileVolumeState deals with the faulted case
		return nil
	}
	if healthy >= max(1, v.Spec.NumberOfReplicas) {
		v.Status.Robustness = longhorn.RobustnessHealthy
	} else {
		v.Status.Robustness = longhorn.RobustnessDegraded
	}
	return nil
}

// switchActiveReplicas sets spec.active = cond(replica) on every replica.
func (s *Sim) switchActiveReplicas(v *longhorn.Volume, rs map[string]*replicaObj, cond func(*longhorn.Replica) bool, reason string) {
	for _, n := range longhorn.SortedKeys(rs) {
		r := rs[n].r
		if want := cond(r); r.Spec.Active != want {
			s.log("info", v.Name, fmt.Sprintf("Switch replica %v active state from %v to %v due to %v", r.Name, r.Spec.Active, want, reason))
			r.Spec.Active = want
		}
	}
}

// processMigration follows Longhorn's: only for a migratable rwx volume that
// is attached, healthy or degraded and not upgrading. Without a migration
// node (and, from 1.5, without currentMigrationNodeID) it finishes a confirm
// or rollback when there are extra engines; otherwise it prepares the
// migration engine and its clone replicas.
func (s *Sim) processMigration(ctx context.Context, vu *unstructured.Unstructured, v *longhorn.Volume, es map[string]*engineObj, rs map[string]*replicaObj) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("failed to process migration for %v: %w", v.Name, err)
		}
	}()
	if !v.Spec.Migratable || v.Spec.AccessMode != longhorn.AccessModeRWX {
		return nil
	}
	if v.Spec.NodeID == "" || v.Status.CurrentNodeID == "" || len(es) == 0 {
		return nil
	}
	if !v.RobustnessUsable() {
		return nil
	}
	if s.isUpgrading(v) {
		return nil
	}

	if v.Spec.MigrationNodeID == "" {
		if len(es) < 2 && (!s.b.cmn || v.Status.CurrentMigrationNodeID == "") {
			return nil
		}
		// a confirmation: the current node becomes spec.nodeID, so the
		// migration engine becomes the current engine
		if v.Status.CurrentNodeID != v.Spec.NodeID {
			s.vlog("info", v, fmt.Sprintf("volume migration complete switching current node id from %v to %v", v.Status.CurrentNodeID, v.Spec.NodeID))
			v.Status.CurrentNodeID = v.Spec.NodeID
		}
		cur, extras, err := s.getNewCurrentEngineAndExtras(v, es)
		if err != nil {
			msg := "Cannot finish the migration confirmation or rollback, need to wait for the current engine becoming attached first"
			if s.ver.AtLeast(1, 7, 0) {
				msg = "Failed to finalize the migration"
			} else if s.ver.AtLeast(1, 5, 0) {
				msg = "Failed to finish the migration confirmation or rollback, need to wait for the current engine becoming attached first"
			}
			s.vlog("warning", v, msg, "error", err.Error())
			return nil
		}
		for _, e := range extras {
			if e.e.DeletionTimestamp != nil {
				continue
			}
			if err := s.deleteEngine(ctx, e, es); err != nil {
				return err
			}
			s.vlog("info", v, fmt.Sprintf("Removing extra engine %v after switching the current engine to %v", e.e.Name, cur.e.Name))
		}
		if !s.b.affected {
			// the #6642 fix: activate only once the others are gone
			cur.e.Spec.Active = true
		}
		// cleanupCorruptedOrStaleReplicas() takes care of old replicas
		s.switchActiveReplicas(v, rs, func(r *longhorn.Replica) bool {
			return r.Spec.EngineName == cur.e.Name && (!s.b.healthyAtFlip || r.Spec.HealthyAt != "")
		}, cur.e.Name)
		if s.b.cmn {
			v.Status.CurrentMigrationNodeID = ""
		}
		return nil
	}

	// init the migration
	if s.b.cmn && v.Status.CurrentMigrationNodeID == "" {
		v.Status.CurrentMigrationNodeID = v.Spec.MigrationNodeID
	}

	revert := false
	defer func() {
		if !revert {
			return
		}
		s.vlog("warning", v, "The migration engine or all migration replicas crashed, will clean them up now")
		cur, extras, cerr := s.getCurrentEngineAndExtras(v, es)
		if cerr != nil {
			s.vlog("error", v, "failed to get the current engine and clean up others during the migration revert", "error", cerr.Error())
			return
		}
		for _, e := range extras {
			if e.e.DeletionTimestamp == nil {
				if derr := s.deleteEngine(ctx, e, es); derr != nil {
					s.vlog("error", v, "failed to clean up the extra engines during the migration revert", "error", derr.Error())
					return
				}
			}
		}
		for _, n := range longhorn.SortedKeys(rs) {
			r := rs[n]
			if r.r.Spec.EngineName == cur.e.Name {
				continue
			}
			if derr := s.deleteReplica(ctx, r, rs); derr != nil {
				s.vlog("error", v, fmt.Sprintf("failed to delete the migration replica %v during the migration revert", r.r.Name), "error", derr.Error())
				return
			}
		}
	}()

	cur, extras, err := s.getCurrentEngineAndExtras(v, es)
	if err != nil {
		return err
	}
	if cur.e.Status.CurrentState != longhorn.StateRunning {
		revert = true
		s.vlog("warning", v, fmt.Sprintf("Need to revert the migration since the current engine %v is state %v", cur.e.Name, cur.e.Status.CurrentState))
		return nil
	}
	available := 0
	var mig *engineObj
	for _, e := range extras {
		if e.e.DeletionTimestamp != nil {
			continue
		}
		available++
		if e.e.Spec.NodeID == "" || e.e.Spec.NodeID == v.Spec.MigrationNodeID {
			mig = e
		}
	}
	if available > 1 || (available > 0 && mig == nil) {
		revert = true
		s.vlog("error", v, fmt.Sprintf("unexpected state for migration, current engine count %v has invalid migration engine %v", len(es), available > 0 && mig == nil))
		return nil
	}
	if mig == nil {
		mig, err = s.createEngine(ctx, vu, v, es, false, cur.e.Name)
		if err != nil {
			return err
		}
	}
	ready, rev, err := s.prepareMigration(ctx, vu, v, cur, mig, rs)
	revert = rev
	if err != nil || !ready || revert {
		return err
	}
	s.vlog("info", v, "volume migration engine is ready", "migrationNodeID", v.Spec.MigrationNodeID, "migrationEngine", mig.e.Name)
	return nil
}

// prepareMigration is prepareReplicasAndEngineForMigration: clone every RW
// replica of the current engine for the migration engine (same data
// directory, inactive), then place the migration engine on the target with
// those clones once they all run.
func (s *Sim) prepareMigration(ctx context.Context, vu *unstructured.Unstructured, v *longhorn.Volume, cur, mig *engineObj, rs map[string]*replicaObj) (ready, revert bool, err error) {
	me := mig.e
	if me.Spec.NodeID != "" && me.Spec.NodeID != v.Spec.MigrationNodeID {
		s.vlog("error", v, fmt.Sprintf("Migration engine is on node %v but volume is somehow required to be migrated to %v, will do revert then restart the migration", me.Spec.NodeID, v.Spec.MigrationNodeID))
		return false, true, nil
	}
	if me.DeletionTimestamp != nil {
		s.vlog("warning", v, "Migration engine is in deletion, will start or continue migration revert")
		return false, true, nil
	}
	if me.Spec.DesireState != longhorn.StateStopped && me.Spec.DesireState != longhorn.StateRunning {
		s.vlog("warning", v, fmt.Sprintf("Need to do revert since the migration engine contains an invalid desire state %v", me.Spec.DesireState))
		return false, true, nil
	}
	if me.Status.CurrentState == longhorn.StateError {
		s.vlog("error", v, fmt.Sprintf("The migration engine is state %v, need to do revert then retry the migration", me.Status.CurrentState))
		return false, true, nil
	}

	currentRs := map[string]*replicaObj{}
	migRs := map[string]*replicaObj{}
	for _, n := range longhorn.SortedKeys(rs) {
		r := rs[n]
		if s.replicaUnavailable(ctx, r.r) {
			continue
		}
		dp := dataPath(r.r)
		switch r.r.Spec.EngineName {
		case cur.e.Name:
			switch mode := cur.e.Status.ReplicaModeMap[r.r.Name]; mode {
			case longhorn.ModeWO:
				return false, true, nil
			case longhorn.ModeRW:
				currentRs[dp] = r
			default:
				s.vlog("warning", v, fmt.Sprintf("unexpected mode %v for the current replica %v, will ignore it and continue migration", mode, r.r.Name))
			}
		case me.Name:
			migRs[dp] = r
		default:
			s.vlog("warning", v, fmt.Sprintf("During migration found unknown replica with engine %v, will directly remove it", r.r.Spec.EngineName))
			if err := s.deleteReplica(ctx, r, rs); err != nil {
				return false, false, err
			}
		}
	}
	// delete clones without a matching original
	for _, dp := range longhorn.SortedKeys(migRs) {
		r := migRs[dp]
		old := currentRs[dp]
		ok := old != nil && r.r.Spec.DesireState == old.r.Spec.DesireState && r.r.DeletionTimestamp == nil &&
			r.r.Spec.DesireState == longhorn.StateRunning && r.r.Status.CurrentState != longhorn.StateError &&
			r.r.Status.CurrentState != longhorn.StateUnknown && r.r.Status.CurrentState != longhorn.StateStopping
		if ok {
			continue
		}
		delete(migRs, dp)
		if err := s.deleteReplica(ctx, r, rs); err != nil {
			return false, false, fmt.Errorf("failed to delete the new replica %v when there is no matching old replica in path %v: %w", r.r.Name, dp, err)
		}
	}
	// clone the missing ones
	for _, dp := range longhorn.SortedKeys(currentRs) {
		if migRs[dp] != nil {
			continue
		}
		c, err := s.cloneReplica(ctx, vu, currentRs[dp], me.Name)
		if err != nil {
			return false, false, fmt.Errorf("cannot create matching replica for volume %v: %w", v.Name, err)
		}
		s.vlog("info", v, fmt.Sprintf("Cloned a new matching replica %v from %v", c.r.Name, currentRs[dp].r.Name))
		migRs[dp] = c
		rs[c.r.Name] = c
		if s.fire(CloneTwice, me, func() []*longhorn.Engine { return nil }) {
			twin, err := s.cloneReplica(ctx, vu, currentRs[dp], me.Name)
			if err != nil {
				return false, false, fmt.Errorf("cannot create matching replica for volume %v: %w", v.Name, err)
			}
			s.vlog("info", v, fmt.Sprintf("Cloned a new matching replica %v from %v again (lhsim fault CloneTwice)", twin.r.Name, currentRs[dp].r.Name))
			rs[twin.r.Name] = twin
		}
	}
	if len(migRs) == 0 {
		s.vlog("warning", v, fmt.Sprintf("volume %v: no valid migration replica during the migration, need to do revert first", v.Name))
		return false, true, nil
	}
	addrs := map[string]string{}
	allReady := true
	for _, dp := range longhorn.SortedKeys(migRs) {
		r := migRs[dp]
		if r.r.Status.CurrentState != longhorn.StateRunning {
			allReady = false
			continue
		}
		if a := replicaAddress(r.u); a != "" {
			addrs[r.r.Name] = a
		}
	}
	if me.Spec.DesireState != longhorn.StateStopped {
		if len(addrs) == 0 {
			s.vlog("warning", v, "No available migration replica for the current running engine, will direct do revert")
			return false, true, nil
		}
		if !allReady || !reflect.DeepEqual(nonNil(me.Spec.ReplicaAddressMap), addrs) {
			s.vlog("warning", v, "The current available migration replicas do not match the record in the migration engine status, will restart the migration engine then update the replica map")
			me.Spec.NodeID = ""
			me.Spec.ReplicaAddressMap = map[string]string{}
			me.Spec.DesireState = longhorn.StateStopped
			return false, false, nil
		}
	} else if me.Status.CurrentState != longhorn.StateStopped || !allReady {
		return false, false, nil
	}
	me.Spec.NodeID = v.Spec.MigrationNodeID
	me.Spec.ReplicaAddressMap = addrs
	me.Spec.DesireState = longhorn.StateRunning
	if me.Status.CurrentState != longhorn.StateRunning {
		return false, false, nil
	}
	return true, false, nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// replicaUnavailable is Longhorn's IsReplicaUnavailable: unscheduled, or on
// a node that is down or gone.
func (s *Sim) replicaUnavailable(ctx context.Context, r *longhorn.Replica) bool {
	if r.Spec.NodeID == "" || r.Spec.DiskID == "" || r.Spec.DiskPath == "" || r.Spec.DataDirectoryName == "" {
		return true
	}
	return !s.nodeReady(ctx, r.Spec.NodeID)
}

// replicaAddress is tcp://<storageIP>:<port> of a running replica.
func replicaAddress(u *unstructured.Unstructured) string {
	ip, _, _ := unstructured.NestedString(u.Object, "status", "storageIP")
	if ip == "" {
		ip, _, _ = unstructured.NestedString(u.Object, "status", "ip")
	}
	port, _, _ := unstructured.NestedInt64(u.Object, "status", "port")
	if ip == "" || port == 0 {
		return ""
	}
	return "tcp://" + ip + ":" + strconv.FormatInt(port, 10)
}

// isAutoSalvageNeeded is Longhorn's: every replica failed (first
// attachment), or no healthy active replica but some failed ones.
func isAutoSalvageNeeded(rs map[string]*replicaObj) bool {
	first := true
	for _, r := range rs {
		if r.r.Spec.HealthyAt != "" {
			first = false
		}
	}
	if first {
		if len(rs) == 0 {
			return false
		}
		for _, r := range rs {
			if r.r.Spec.FailedAt == "" {
				return false
			}
		}
		return true
	}
	healthy, failed := 0, 0
	for _, r := range rs {
		if r.r.Spec.FailedAt != "" {
			failed++
		} else if r.r.Spec.HealthyAt != "" && r.r.Spec.Active {
			healthy++
		}
	}
	return healthy == 0 && failed > 0
}

// reconcileVolumeState handles attaching and detaching (Longhorn's
// ReconcileVolumeState without restore, expansion, scheduling conditions
// and the salvage itself).
func (s *Sim) reconcileVolumeState(ctx context.Context, vu *unstructured.Unstructured, v *longhorn.Volume, es map[string]*engineObj, rs map[string]*replicaObj) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("failed to reconcile volume state for %v: %w", v.Name, err)
		}
	}()
	cur, err := s.pickCurrentEngine(v, es)
	if err != nil {
		return err
	}
	newVolume := false
	if v.Status.CurrentImage == "" {
		v.Status.CurrentImage = v.WantedImage()
	}
	if v.Status.CurrentNodeID == "" {
		if v.Status.PendingNodeID == "" && v.Status.Robustness != longhorn.RobustnessFaulted {
			v.Status.CurrentNodeID = v.Spec.NodeID
		}
	} else if v.Spec.NodeID != "" && v.Spec.NodeID != v.Status.CurrentNodeID {
		if cur != nil && cur.e.Spec.NodeID == v.Spec.NodeID && cur.e.DeletionTimestamp == nil {
			s.vlog("info", v, fmt.Sprintf("switching current node id from %v to %v since we have an engine on that node already", v.Status.CurrentNodeID, v.Spec.NodeID))
			v.Status.CurrentNodeID = v.Spec.NodeID
			s.switchActiveReplicas(v, rs, func(r *longhorn.Replica) bool { return r.Spec.EngineName == cur.e.Name }, cur.e.Name)
		}
		return fmt.Errorf("volume %v has already attached to node %v, but asked to attach to node %v", v.Name, v.Status.CurrentNodeID, v.Spec.NodeID)
	}
	if cur == nil {
		cur, err = s.createEngine(ctx, vu, v, es, true, "")
		if err != nil {
			return err
		}
		newVolume = true
	}
	if len(rs) == 0 {
		if err := s.createReplicas(ctx, vu, v, cur, rs); err != nil {
			return err
		}
	}
	// checkForAutoDetachment
	if v.Spec.NodeID == "" && v.Status.CurrentNodeID != "" {
		v.Status.CurrentNodeID = ""
	}
	v.Status.FrontendDisabled = v.Spec.DisableFrontend
	e := cur.e
	if isAutoSalvageNeeded(rs) {
		v.Status.Robustness = longhorn.RobustnessFaulted
		v.Status.CurrentNodeID = ""
	} else {
		if v.Status.Robustness == longhorn.RobustnessFaulted {
			v.Status.Robustness = longhorn.RobustnessUnknown
		}
		// reattach the volume if its engine died unexpectedly
		if e.Status.CurrentState == longhorn.StateError && v.Status.CurrentNodeID != "" {
			v.Status.PendingNodeID = v.Status.CurrentNodeID
			s.vlog("warning", v, "Engine of volume dead unexpectedly, reattach the volume")
			v.Status.Robustness = longhorn.RobustnessFaulted
			v.Status.CurrentNodeID = ""
		}
	}

	oldState := v.Status.State
	if v.Status.CurrentNodeID == "" {
		if newVolume {
			v.Status.State = volumeStateCreating
		} else if v.Status.State != longhorn.VolumeStateDetached {
			v.Status.State = longhorn.VolumeStateDetaching
		}
		if v.Status.Robustness != longhorn.RobustnessFaulted {
			v.Status.Robustness = longhorn.RobustnessUnknown
		}
		if e.Spec.DesireState != longhorn.StateStopped || e.Spec.NodeID != "" {
			e.Spec.NodeID = ""
			e.Spec.DesireState = longhorn.StateStopped
		}
		// stop the engine before the replicas
		if e.Status.CurrentState != longhorn.StateStopped {
			return nil
		}
		allStopped := true
		for _, n := range longhorn.SortedKeys(rs) {
			r := rs[n].r
			if r.Spec.DesireState != longhorn.StateStopped {
				r.Spec.DesireState = longhorn.StateStopped
			}
			if r.Status.CurrentState != longhorn.StateStopped {
				allStopped = false
			}
		}
		if !allStopped {
			return nil
		}
		v.Status.State = longhorn.VolumeStateDetached
		if oldState != v.Status.State {
			s.vlog("info", v, fmt.Sprintf("volume %v has been detached", v.Name))
		}
		if v.Status.PendingNodeID != "" {
			s.vlog("info", v, fmt.Sprintf("Prepare to reattach the volume to %v after the detachment success", v.Status.PendingNodeID))
			v.Status.CurrentNodeID = v.Status.PendingNodeID
			v.Status.PendingNodeID = ""
		}
		return nil
	}

	if e.Status.CurrentState != longhorn.StateRunning && e.Status.CurrentState != longhorn.StateUnknown {
		v.Status.State = longhorn.VolumeStateAttaching
	}
	for _, n := range longhorn.SortedKeys(rs) {
		r := rs[n].r
		if r.Spec.NodeID == "" || r.DeletionTimestamp != nil {
			continue
		}
		if s.nodeReady(ctx, r.Spec.NodeID) && r.Spec.FailedAt == "" && r.Status.CurrentState == longhorn.StateStopped {
			r.Spec.DesireState = longhorn.StateRunning
		}
	}
	addrs := map[string]string{}
	for _, n := range longhorn.SortedKeys(rs) {
		r := rs[n]
		if r.r.Spec.NodeID == "" || r.r.Spec.EngineName != e.Name || r.r.Spec.FailedAt != "" ||
			r.r.Status.CurrentState == longhorn.StateError {
			continue
		}
		// wait for all potentially healthy replicas to run
		if r.r.Status.CurrentState != longhorn.StateRunning {
			return nil
		}
		if a := replicaAddress(r.u); a != "" {
			addrs[r.r.Name] = a
		}
	}
	if len(addrs) == 0 {
		return errors.New("no healthy or scheduled replica for starting")
	}
	if e.Spec.NodeID != "" && e.Spec.NodeID != v.Status.CurrentNodeID {
		return fmt.Errorf("engine is on node %v vs volume on %v, must detach first", e.Spec.NodeID, v.Status.CurrentNodeID)
	}
	e.Spec.NodeID = v.Status.CurrentNodeID
	e.Spec.ReplicaAddressMap = addrs
	e.Spec.DesireState = longhorn.StateRunning
	e.Spec.DisableFrontend = v.Status.FrontendDisabled
	e.Spec.Frontend = v.Spec.Frontend
	if e.Status.CurrentState != longhorn.StateRunning {
		return nil
	}
	v.Status.State = longhorn.VolumeStateAttached
	if oldState != v.Status.State {
		s.vlog("info", v, fmt.Sprintf("volume %v has been attached to %v", v.Name, v.Status.CurrentNodeID))
	}
	return nil
}

// cleanupReplicas runs cleanupCorruptedOrStaleReplicas' leftover part:
// while the volume is neither migrating nor upgrading, every inactive
// replica is deleted.
func (s *Sim) cleanupReplicas(ctx context.Context, v *longhorn.Volume, es map[string]*engineObj, rs map[string]*replicaObj) error {
	if s.isMigrating(v) {
		return nil
	}
	if _, err := s.pickCurrentEngine(v, es); err != nil {
		return err
	}
	if s.isUpgrading(v) {
		return nil
	}
	for _, n := range longhorn.SortedKeys(rs) {
		r := rs[n]
		if r.r.Spec.Active || r.r.DeletionTimestamp != nil {
			continue
		}
		s.vlog("info", v, fmt.Sprintf("Removing inactive replica %v", r.r.Name))
		if err := s.deleteReplica(ctx, r, rs); err != nil {
			return err
		}
	}
	return nil
}

// engineName is the name for a new engine: <vol>-e-<8 hex> on releases
// with random names, <vol>-e-0 then <vol>-e-<N+1> on deterministic ones.
func (s *Sim) engineName(vol, current string) string {
	if !s.b.deterministic {
		return vol + "-e-" + s.randomHex()
	}
	if current == "" {
		return vol + "-e-0"
	}
	i := strings.LastIndex(current, "-")
	n, err := strconv.Atoi(current[i+1:])
	if err != nil {
		return vol + "-e-1"
	}
	return vol + "-e-" + strconv.Itoa(n+1)
}

// setEngineFields puts the per-release image and data-engine fields into a spec.
func (s *Sim) setEngineFields(spec map[string]any, image, dataEngine string) {
	spec[s.b.imageField] = image
	if s.b.dataEngineField != "" {
		if dataEngine == "" {
			dataEngine = longhorn.DataEngineV1
		}
		spec[s.b.dataEngineField] = dataEngine
	}
}

// createEngine creates an engine the way Longhorn's volume controller does:
// stopped, unplaced, active only for a volume's first engine.
func (s *Sim) createEngine(ctx context.Context, vu *unstructured.Unstructured, v *longhorn.Volume, es map[string]*engineObj, active bool, current string) (*engineObj, error) {
	var lastErr error
	for range 5 {
		name := s.engineName(v.Name, current)
		u := newObject(longhorn.Engines.Kind, s.ns, name)
		u.SetLabels(map[string]string{longhorn.VolumeLabel: v.Name, nodeLabel: ""})
		u.SetFinalizers([]string{longhorn.Finalizer})
		_ = unstructured.SetNestedSlice(u.Object, ownerRefs(vu), "metadata", "ownerReferences")
		image := v.Status.CurrentImage
		if image == "" {
			image = v.WantedImage()
		}
		spec := map[string]any{
			"volumeName":                       v.Name,
			"volumeSize":                       v.Spec.Size,
			"nodeID":                           "",
			"active":                           active,
			"desireState":                      longhorn.StateStopped,
			"frontend":                         v.Spec.Frontend,
			"disableFrontend":                  false,
			"replicaAddressMap":                map[string]any{},
			"upgradedReplicaAddressMap":        map[string]any{},
			"revisionCounterDisabled":          false,
			"logRequested":                     false,
			"salvageRequested":                 false,
			"unmapMarkSnapChainRemovedEnabled": false,
		}
		s.setEngineFields(spec, image, v.DataEngineName())
		u.Object["spec"] = spec
		s.mu.Lock()
		s.seq++
		s.created[name] = s.seq
		s.mu.Unlock()
		nu, err := s.create(ctx, longhorn.Engines, u)
		if err != nil {
			lastErr = err
			if isAlreadyExists(err) && !s.b.deterministic {
				continue
			}
			return nil, err
		}
		o, err := newEngineObj(nu)
		if err != nil {
			return nil, err
		}
		es[name] = o
		s.vlog("info", v, fmt.Sprintf("Created engine %v", name), "active", strconv.FormatBool(active))
		return o, nil
	}
	return nil, lastErr
}

// createReplicas creates a new volume's replicas, one per node: the nodes
// CreateVolume was given, else Ready and schedulable nodes by name.
func (s *Sim) createReplicas(ctx context.Context, vu *unstructured.Unstructured, v *longhorn.Volume, e *engineObj, rs map[string]*replicaObj) error {
	s.mu.Lock()
	nodes := append([]string(nil), s.placement[v.Name]...)
	s.mu.Unlock()
	n := v.Spec.NumberOfReplicas
	if len(nodes) == 0 {
		all, err := s.listU(ctx, longhorn.Nodes)
		if err != nil {
			return err
		}
		for i := range all {
			nd := &longhorn.Node{}
			if decode(&all[i], nd) == nil && nd.Ready() && nd.Schedulable() {
				nodes = append(nodes, nd.Name)
			}
		}
		if n > 0 && len(nodes) > n {
			nodes = nodes[:n]
		}
	}
	if len(nodes) == 0 {
		s.vlog("error", v, "unable to schedule replica")
		return nil
	}
	image := v.Status.CurrentImage
	if image == "" {
		image = v.WantedImage()
	}
	for _, node := range nodes {
		spec := map[string]any{
			"volumeName":        v.Name,
			"volumeSize":        v.Spec.Size,
			"nodeID":            node,
			"diskID":            diskID(node),
			"diskPath":          defaultDiskPath,
			"dataDirectoryName": v.Name + "-" + s.randomHex(),
			"engineName":        e.e.Name,
			"active":            true,
			"desireState":       longhorn.StateStopped,
			"healthyAt":         "",
			"failedAt":          "",
			"rebuildRetryCount": int64(0),
		}
		s.setEngineFields(spec, image, v.DataEngineName())
		o, err := s.createReplica(ctx, vu, v.Name, node, spec)
		if err != nil {
			return err
		}
		rs[o.r.Name] = o
	}
	return nil
}

// cloneReplica duplicates a replica for the migration engine: the whole spec
// (data directory, disk, node, healthyAt…) with another engine, inactive,
// desired running.
func (s *Sim) cloneReplica(ctx context.Context, vu *unstructured.Unstructured, orig *replicaObj, engine string) (*replicaObj, error) {
	spec, _, _ := unstructured.NestedMap(orig.u.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	spec["engineName"] = engine
	spec["active"] = false
	spec["desireState"] = longhorn.StateRunning
	return s.createReplica(ctx, vu, orig.r.Spec.VolumeName, orig.r.Spec.NodeID, spec)
}

func (s *Sim) createReplica(ctx context.Context, vu *unstructured.Unstructured, vol, node string, spec map[string]any) (*replicaObj, error) {
	var lastErr error
	for range 5 {
		name := vol + "-r-" + s.randomHex()
		u := newObject(longhorn.Replicas.Kind, s.ns, name)
		u.SetLabels(map[string]string{longhorn.VolumeLabel: vol, nodeLabel: node, diskLabel: diskID(node)})
		u.SetFinalizers([]string{longhorn.Finalizer})
		_ = unstructured.SetNestedSlice(u.Object, ownerRefs(vu), "metadata", "ownerReferences")
		u.Object["spec"] = runtime.DeepCopyJSON(spec)
		nu, err := s.create(ctx, longhorn.Replicas, u)
		if err != nil {
			lastErr = err
			if isAlreadyExists(err) {
				continue
			}
			return nil, err
		}
		return newReplicaObj(nu)
	}
	return nil, lastErr
}

func diskID(node string) string { return hexOf("disk/"+node, 32) }

// deleteVolume is the deletion branch of syncVolume: delete engines and
// replicas (and the VolumeAttachment), then drop the finalizer once they
// are gone.
func (s *Sim) deleteVolume(ctx context.Context, vu *unstructured.Unstructured, v *longhorn.Volume, es map[string]*engineObj, rs map[string]*replicaObj) error {
	if v.Status.State != volumeStateDeleting {
		v.Status.State = volumeStateDeleting
		if err := s.updateVolumeStatus(ctx, vu, v); err != nil {
			return err
		}
		s.vlog("info", v, "Deleting volume "+v.Name)
	}
	for _, n := range longhorn.SortedKeys(es) {
		if es[n].e.DeletionTimestamp == nil {
			if err := s.del(ctx, longhorn.Engines, n); err != nil && !isNotFound(err) {
				return err
			}
		}
	}
	for _, n := range longhorn.SortedKeys(rs) {
		if rs[n].r.DeletionTimestamp == nil {
			if err := s.del(ctx, longhorn.Replicas, n); err != nil && !isNotFound(err) {
				return err
			}
		}
	}
	if s.b.va {
		if err := s.del(ctx, longhorn.VolumeAttachments, v.Name); err != nil && !isNotFound(err) {
			return err
		}
	}
	if len(es) > 0 || len(rs) > 0 {
		return nil
	}
	left, err := s.listOf(ctx, longhorn.Engines, v.Name)
	if err != nil || len(left) > 0 {
		return err
	}
	if left, err = s.listOf(ctx, longhorn.Replicas, v.Name); err != nil || len(left) > 0 {
		return err
	}
	nu, err := s.getU(ctx, longhorn.Volumes, v.Name)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	if !hasFinalizer(nu) {
		return nil
	}
	nu.SetFinalizers(withoutFinalizer(nu))
	_, err = s.update(ctx, longhorn.Volumes, nu)
	if isNotFound(err) {
		return nil
	}
	return err
}

// Volume states pkg/longhorn does not name.
const (
	volumeStateCreating = "creating"
	volumeStateDeleting = "deleting"
)
