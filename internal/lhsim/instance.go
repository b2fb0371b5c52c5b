package lhsim

import (
	"context"
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// process is an engine or replica process in an instance manager.
type process struct {
	name   string
	node   string
	kind   string // "engine" or "replica"
	vol    string
	im     string // instance manager it was started in
	port   int64
	orphan bool // its CR is gone but the process stayed
}

const (
	procEngine  = "engine"
	procReplica = "replica"
)

func (s *Sim) imImage() string { return "longhornio/longhorn-instance-manager:" + s.ver.String() }

func (s *Sim) engineImage() string { return "longhornio/longhorn-engine:" + s.ver.String() }

// imName is the instance manager that runs processes of kind on node:
// instance-manager-e-/-r-<hash> up to 1.4, one aio instance-manager-<hash>
// from 1.5.
func (s *Sim) imName(node, kind string) string {
	if s.b.aioIM {
		return "instance-manager-" + hexOf(node+s.imImage(), 32)
	}
	if kind == procEngine {
		return "instance-manager-e-" + hexOf(node+s.imImage(), 8)
	}
	return "instance-manager-r-" + hexOf(node+s.imImage(), 8)
}

func (s *Sim) startProcess(name, node, kind, vol string) *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[name]
	if p != nil && p.node == node && !p.orphan {
		return p
	}
	p = &process{name: name, node: node, kind: kind, vol: vol, im: s.imName(node, kind), port: instancePort(name)}
	s.procs[name] = p
	s.queue.Add(keyIM)
	return p
}

func (s *Sim) processOf(name string) *process {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.procs[name]; p != nil && !p.orphan {
		c := *p
		return &c
	}
	return nil
}

// stopProcess ends a process, or, when orphan is true, leaves it running
// with nobody owning it.
func (s *Sim) stopProcess(name string, orphan bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[name]
	if p == nil || p.orphan {
		return
	}
	if orphan {
		p.orphan = true
	} else {
		delete(s.procs, name)
	}
	s.queue.Add(keyIM)
}

// nodeReady reports whether a Longhorn Node exists and its Ready condition
// is True (Longhorn's IsNodeDownOrDeleted, negated).
func (s *Sim) nodeReady(ctx context.Context, name string) bool {
	if name == "" {
		return false
	}
	_, n, err := getAs[longhorn.Node](ctx, s, longhorn.Nodes, name)
	return err == nil && n.Ready()
}

// enginesOf lists the typed engines of a volume live, for fault roles.
func (s *Sim) enginesOf(ctx context.Context, vol string) ([]*longhorn.Engine, error) {
	us, err := s.listOf(ctx, longhorn.Engines, vol)
	if err != nil {
		return nil, err
	}
	out := make([]*longhorn.Engine, 0, len(us))
	for i := range us {
		e := &longhorn.Engine{}
		if err := decode(&us[i], e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// syncEngine is the engine side of Longhorn's instance handler plus the
// engine controller's deletion: it runs or stops the engine process as the
// spec asks and reports it in status; on deletion it cleans up the process
// and removes the finalizer.
func (s *Sim) syncEngine(ctx context.Context, name string) error {
	u, e, err := getAs[longhorn.Engine](ctx, s, longhorn.Engines, name)
	if isNotFound(err) {
		// Gone without a cleanup we did (someone removed the finalizer):
		// whatever process it had is now an orphan.
		s.mu.Lock()
		if p := s.procs[name]; p != nil && !p.orphan {
			p.orphan = true
			s.queue.Add(keyIM)
		}
		s.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	vol := volumeOf(u)
	all := func() []*longhorn.Engine {
		es, _ := s.enginesOf(ctx, vol)
		return es
	}
	if e.DeletionTimestamp != nil {
		if s.processOf(name) != nil {
			orphan := s.fire(OrphanProcess, e, all)
			if orphan {
				s.log("warning", vol, "Engine process left running in its instance manager (lhsim fault OrphanProcess)", "controller", "longhorn-engine", "engine", name, "node", e.Spec.NodeID)
			}
			s.stopProcess(name, orphan)
		}
		if !hasFinalizer(u) {
			return nil
		}
		if s.fire(FinalizerStuck, e, all) {
			return fmt.Errorf("failed to clean up engine %v before removing the finalizer (lhsim fault %s)", name, FinalizerStuck)
		}
		u.SetFinalizers(withoutFinalizer(u))
		if _, err := s.update(ctx, longhorn.Engines, u); err != nil && !isNotFound(err) {
			return err
		}
		s.log("info", vol, "Removed the finalizer of deleted engine", "controller", "longhorn-engine", "engine", name, "node", e.Status.OwnerID)
		return nil
	}

	status := nestedMap(u, "status")
	next := runtime.DeepCopyJSON(status)
	cur := e.Status.CurrentState

	switch {
	case e.Spec.DesireState == longhorn.StateRunning && e.Spec.NodeID != "":
		node := e.Spec.NodeID
		if !s.nodeReady(ctx, node) {
			nodeDownStatus(next)
			break
		}
		if !e.Spec.Active && s.fire(MigrationEngineNeverReady, e, all) {
			s.stopProcess(name, false)
			stoppedStatus(next)
			next["currentState"] = longhorn.StateStarting
			break
		}
		if cur == longhorn.StateError {
			// a crashed engine stays in error until it is stopped
			break
		}
		p := s.processOf(name)
		if p != nil && p.node == node && cur == longhorn.StateRunning && s.fire(EngineCrash, e, all) {
			s.stopProcess(name, false)
			stoppedStatus(next)
			next["currentState"] = longhorn.StateError
			s.log("warning", vol, "Engine process crashed (lhsim fault EngineCrash)", "controller", "longhorn-engine", "engine", name, "node", node)
			break
		}
		modes, rw, err := s.replicaModes(ctx, e)
		if err != nil {
			return err
		}
		if (p == nil || p.node != node) && rw == 0 {
			// cannot start without a replica to serve it
			stoppedStatus(next)
			next["currentState"] = longhorn.StateStarting
			break
		}
		p = s.startProcess(name, node, procEngine, vol)
		ip := nodeIP(node)
		next["currentState"] = longhorn.StateRunning
		next["ownerID"] = node
		next["instanceManagerName"] = p.im
		next["ip"] = ip
		next["storageIP"] = ip
		next["port"] = p.port
		next["started"] = true
		next["endpoint"] = endpointFor(e, vol, ip)
		next["currentImage"] = e.ImageName()
		next["currentSize"] = e.Spec.VolumeSize
		if s.recordsTransitionTimes() {
			next["replicaTransitionTimeMap"] = strMapToU(transitionTimes(e, modes))
		}
		next["replicaModeMap"] = strMapToU(modes)
		next["currentReplicaAddressMap"] = strMapToU(e.Spec.ReplicaAddressMap)
		next["snapshots"] = s.snapshotStatus(vol, e, all)
	default:
		s.stopProcess(name, false)
		stoppedStatus(next)
		next["currentState"] = longhorn.StateStopped
		if e.Spec.NodeID != "" {
			next["ownerID"] = e.Spec.NodeID
		}
	}
	return s.writeInstanceStatus(ctx, longhorn.Engines, u, status, next)
}

// stoppedStatus clears what only a running instance reports.
// nodeDownStatus is what Longhorn's instance handler records for an
// instance whose node is down: unknown if it had started (stopped if not),
// and no address. Longhorn's datastore rejects a running-or-not replica whose
// address disagrees with its state ("instance state and IP wasn't in sync"),
// so keeping the old address would stall every sync of the volume.
func nodeDownStatus(st map[string]any) {
	if started, _ := st["started"].(bool); started {
		st["currentState"] = longhorn.StateUnknown
	} else {
		st["currentState"] = longhorn.StateStopped
		st["currentImage"] = ""
	}
	st["ip"] = ""
	st["storageIP"] = ""
	st["port"] = int64(0)
}

func stoppedStatus(st map[string]any) {
	st["endpoint"] = ""
	st["ip"] = ""
	st["storageIP"] = ""
	st["port"] = int64(0)
	st["started"] = false
	st["instanceManagerName"] = ""
	delete(st, "replicaModeMap")
	delete(st, "replicaTransitionTimeMap")
	delete(st, "currentReplicaAddressMap")
	delete(st, "snapshots")
}

// TakeSnapshot records a user snapshot of vol, as the engine serving it
// takes one into every replica's data directory: each running engine of vol
// lists it at its next sync, unless SnapshotNotSynced holds it back.
func (s *Sim) TakeSnapshot(ctx context.Context, vol, name string) error {
	s.mu.Lock()
	if s.snaps == nil {
		s.snaps = map[string][]string{}
	}
	s.snaps[vol] = append(s.snaps[vol], name)
	s.mu.Unlock()
	es, err := s.enginesOf(ctx, vol)
	if err != nil {
		return err
	}
	for _, e := range es {
		s.enqueue(key(kindEngine, e.Name))
	}
	return nil
}

// snapshotStatus is a running engine's status.snapshots: the volume head
// and the snapshots taken of vol, unless SnapshotNotSynced holds them back.
func (s *Sim) snapshotStatus(vol string, e *longhorn.Engine, all func() []*longhorn.Engine) map[string]any {
	out := map[string]any{"volume-head": volumeHead()}
	s.mu.Lock()
	names := slices.Clone(s.snaps[vol])
	s.mu.Unlock()
	if len(names) == 0 || s.fire(SnapshotNotSynced, e, all) {
		return out
	}
	for _, n := range names {
		out[n] = snapshotInfo(n, true)
	}
	return out
}

func volumeHead() map[string]any { return snapshotInfo("volume-head", false) }

// snapshotInfo is one entry of an engine's status.snapshots.
func snapshotInfo(name string, user bool) map[string]any {
	return map[string]any{
		"name": name, "parent": "", "children": map[string]any{}, "removed": false,
		"usercreated": user, "created": "", "size": "0", "labels": map[string]any{},
	}
}

// endpointFor is the frontend endpoint a running engine reports.
func endpointFor(e *longhorn.Engine, vol, ip string) string {
	if e.Spec.DisableFrontend {
		return ""
	}
	switch e.Spec.Frontend {
	case "blockdev":
		return "/dev/longhorn/" + vol
	case "iscsi":
		return fmt.Sprintf("iscsi://%s:3260/iqn.2019-10.io.longhorn:%s/1", ip, vol)
	case "nvmf":
		return fmt.Sprintf("nvmf://%s:20001/nqn.2023-01.io.longhorn.spdk:%s", ip, vol)
	}
	return ""
}

// replicaModes is what a running engine reports for the replicas in its
// replicaAddressMap: RW for a running replica, ERR for one that is gone or
// not running.
func (s *Sim) replicaModes(ctx context.Context, e *longhorn.Engine) (map[string]string, int, error) {
	modes := map[string]string{}
	rw := 0
	for _, rName := range longhorn.SortedKeys(e.Spec.ReplicaAddressMap) {
		u, err := s.getU(ctx, longhorn.Replicas, rName)
		if err != nil && !isNotFound(err) {
			return nil, 0, err
		}
		mode := longhorn.ModeERR
		if err == nil {
			st, _, _ := unstructured.NestedString(u.Object, "status", "currentState")
			if st == longhorn.StateRunning && u.GetDeletionTimestamp() == nil {
				mode = longhorn.ModeRW
				rw++
			}
		}
		modes[rName] = mode
	}
	return modes, rw, nil
}

// recordsTransitionTimes: the release's Engine CRD has
// status.replicaTransitionTimeMap (1.5.5 on the 1.5 line, 1.6.1 on), which
// the volume controller compares with a replica's spec.lastHealthyAt: with
// no entry it logs "BUG: ... transition time was not recorded" and writes
// lastHealthyAt again at every sync, so no volume would ever go quiet.
func (s *Sim) recordsTransitionTimes() bool {
	if s.ver.Major == 1 && s.ver.Minor == 5 {
		return s.ver.Patch >= 5
	}
	return s.ver.AtLeast(1, 6, 1)
}

// transitionTimes is the engine controller's replicaTransitionTimeMap for
// the replica modes it is about to report: now for a replica new to the
// engine or whose mode changed, the recorded time otherwise.
func transitionTimes(e *longhorn.Engine, modes map[string]string) map[string]string {
	out := map[string]string{}
	for r, mode := range modes {
		old, ok := e.Status.ReplicaTransitionTimeMap[r]
		if !ok || e.Status.ReplicaModeMap[r] != mode {
			old = now()
		}
		out[r] = old
	}
	return out
}

// dataPath identifies a replica's data directory: node, disk path and
// directory name, as Longhorn's GetReplicaDataPath on that node.
func dataPath(r *longhorn.Replica) string {
	if r.Spec.NodeID == "" || r.Spec.DataDirectoryName == "" {
		return ""
	}
	return r.Spec.NodeID + ":" + path.Join(r.Spec.DiskPath, "replicas", r.Spec.DataDirectoryName)
}

// writeInstanceStatus writes next as the status of an engine or replica u
// whose status was status, unless nothing changed; an object deleted in the
// meantime is no error.
func (s *Sim) writeInstanceStatus(ctx context.Context, r longhorn.Resource, u *unstructured.Unstructured, status, next map[string]any) error {
	if reflect.DeepEqual(status, next) {
		return nil
	}
	_ = unstructured.SetNestedMap(u.Object, next, "status")
	_, err := s.updateStatus(ctx, r, u)
	if isNotFound(err) {
		return nil
	}
	return err
}

// syncReplica is the replica side of the instance handler plus the replica
// controller's deletion, including its data clean-up: deleting an active
// replica wipes its data directory, even when a clone shares it.
func (s *Sim) syncReplica(ctx context.Context, name string) error {
	u, r, err := getAs[longhorn.Replica](ctx, s, longhorn.Replicas, name)
	if isNotFound(err) {
		s.stopProcess(name, false)
		return nil
	}
	if err != nil {
		return err
	}
	vol := volumeOf(u)
	if r.DeletionTimestamp != nil {
		s.stopProcess(name, false)
		if !hasFinalizer(u) {
			return nil
		}
		if err := s.cleanupReplicaData(ctx, r, vol); err != nil {
			return err
		}
		u.SetFinalizers(withoutFinalizer(u))
		if _, err := s.update(ctx, longhorn.Replicas, u); err != nil && !isNotFound(err) {
			return err
		}
		return nil
	}

	status := nestedMap(u, "status")
	next := runtime.DeepCopyJSON(status)
	switch {
	case r.Spec.DesireState == longhorn.StateRunning && r.Spec.NodeID != "":
		if !s.nodeReady(ctx, r.Spec.NodeID) {
			nodeDownStatus(next)
			break
		}
		p := s.startProcess(name, r.Spec.NodeID, procReplica, vol)
		ip := nodeIP(r.Spec.NodeID)
		next["currentState"] = longhorn.StateRunning
		next["ownerID"] = r.Spec.NodeID
		next["instanceManagerName"] = p.im
		next["ip"] = ip
		next["storageIP"] = ip
		next["port"] = p.port
		next["started"] = true
		img := r.Spec.Image
		if img == "" {
			img = r.Spec.EngineImage
		}
		next["currentImage"] = img
	default:
		s.stopProcess(name, false)
		next["currentState"] = longhorn.StateStopped
		next["ip"] = ""
		next["storageIP"] = ""
		next["port"] = int64(0)
		next["started"] = false
		next["instanceManagerName"] = ""
		if r.Spec.NodeID != "" {
			next["ownerID"] = r.Spec.NodeID
		}
	}
	return s.writeInstanceStatus(ctx, longhorn.Replicas, u, status, next)
}

// cleanupReplicaData wipes the directory of a deleted replica when Longhorn
// would: always for an active replica; from 1.5.3 also for an inactive one
// that no other Replica CR shares the directory with.
func (s *Sim) cleanupReplicaData(ctx context.Context, r *longhorn.Replica, vol string) error {
	dp := dataPath(r)
	if dp == "" {
		return nil
	}
	wipe := r.Spec.Active
	if !wipe && s.b.wipeSoleDir {
		shared := false
		others, err := s.listOf(ctx, longhorn.Replicas, vol)
		if err != nil {
			return err
		}
		for i := range others {
			o := &longhorn.Replica{}
			if err := decode(&others[i], o); err != nil {
				return err
			}
			if o.Name != r.Name && o.Spec.NodeID == r.Spec.NodeID && o.Spec.DiskID == r.Spec.DiskID &&
				o.Spec.DiskPath == r.Spec.DiskPath && o.Spec.DataDirectoryName == r.Spec.DataDirectoryName {
				shared = true
				break
			}
		}
		wipe = !shared
	}
	if !wipe {
		s.log("info", vol, "Didn't cleanup replica since it's not the active one for the path or the path is empty", "controller", "longhorn-replica", "replica", r.Name, "node", r.Spec.NodeID)
		return nil
	}
	s.mu.Lock()
	s.wiped[dp] = vol
	s.mu.Unlock()
	s.log("info", vol, "Cleaning up replica", "controller", "longhorn-replica", "replica", r.Name, "node", r.Spec.NodeID, "dataPath", dp)
	return nil
}

// syncInstanceManagers writes every instance manager's process lists from
// the simulator's process table: status.instances up to 1.4,
// status.instanceEngines and status.instanceReplicas from 1.5.
func (s *Sim) syncInstanceManagers(ctx context.Context) error {
	ims, err := s.listU(ctx, longhorn.InstanceManagers)
	if err != nil {
		return err
	}
	type imInfo struct{ node, typ string }
	info := map[string]imInfo{}
	for i := range ims {
		node, _, _ := unstructured.NestedString(ims[i].Object, "spec", "nodeID")
		typ, _, _ := unstructured.NestedString(ims[i].Object, "spec", "type")
		info[ims[i].GetName()] = imInfo{node, typ}
	}
	// where each process is listed: its own instance manager if it exists,
	// else the first one of its node that runs its kind
	placed := map[string][]*process{}
	s.mu.Lock()
	for _, p := range s.procs {
		c := *p
		target := ""
		if _, ok := info[p.im]; ok {
			target = p.im
		} else {
			for _, n := range longhorn.SortedKeys(info) {
				in := info[n]
				if in.node == p.node && (in.typ == "aio" || in.typ == p.kind) {
					target = n
					break
				}
			}
		}
		if target != "" {
			placed[target] = append(placed[target], &c)
		}
	}
	s.mu.Unlock()

	var firstErr error
	for i := range ims {
		u := &ims[i]
		status := nestedMap(u, "status")
		next := runtime.DeepCopyJSON(status)
		node := info[u.GetName()].node
		next["currentState"] = longhorn.StateRunning
		next["ownerID"] = node
		next["ip"] = nodeIP(node)
		engines, replicas := map[string]any{}, map[string]any{}
		for _, p := range placed[u.GetName()] {
			entry := map[string]any{
				"spec": map[string]any{"name": p.name},
				"status": map[string]any{
					"state": longhorn.StateRunning, "type": p.kind, "portStart": p.port, "portEnd": p.port,
					"listen": "", "endpoint": "", "errorMsg": "", "resourceVersion": int64(1),
				},
			}
			if p.kind == procEngine {
				engines[p.name] = entry
			} else {
				replicas[p.name] = entry
			}
		}
		if info[u.GetName()].typ == "aio" {
			next["instanceEngines"] = engines
			next["instanceReplicas"] = replicas
		} else {
			all := map[string]any{}
			for k, v := range engines {
				all[k] = v
			}
			for k, v := range replicas {
				all[k] = v
			}
			next["instances"] = all
		}
		if reflect.DeepEqual(status, next) {
			continue
		}
		_ = unstructured.SetNestedMap(u.Object, next, "status")
		if _, err := s.updateStatus(ctx, longhorn.InstanceManagers, u); err != nil && !isNotFound(err) && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// Processes lists the instance processes on a node (sorted), orphans included.
func (s *Sim) Processes(node string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.procs {
		if p.node == node {
			out = append(out, p.name)
		}
	}
	sort.Strings(out)
	return out
}

// OrphanProcesses lists processes whose CR is gone (sorted).
func (s *Sim) OrphanProcesses() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, p := range s.procs {
		if p.orphan {
			out = append(out, p.name)
		}
	}
	sort.Strings(out)
	return out
}

// KillProcess ends a process (what restarting its instance manager would
// do), orphan or not; its CR, if any, is then restarted by its controller.
func (s *Sim) KillProcess(name string) {
	s.mu.Lock()
	delete(s.procs, name)
	s.mu.Unlock()
	if s.queue != nil {
		s.enqueue(keyIM, key(kindEngine, name), key(kindReplica, name))
	}
}

// WipedDirs lists the data directories of vol that a replica deletion
// wiped, as "<node>:<disk path>/replicas/<dir>" (sorted).
func (s *Sim) WipedDirs(vol string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for dp, v := range s.wiped {
		if v == vol {
			out = append(out, dp)
		}
	}
	sort.Strings(out)
	return out
}

// DataLost reports whether vol's data is gone or out of Longhorn's reach: a
// data directory of the volume was wiped, or no engine (not being deleted)
// of the volume is served by any replica (spec.engineName) whose directory
// is intact. A volume without engines counts as lost only when no replica
// with an intact directory remains.
func (s *Sim) DataLost(ctx context.Context, vol string) (bool, error) {
	if len(s.WipedDirs(vol)) > 0 {
		return true, nil
	}
	_, es, rs, err := s.State(ctx, vol)
	if err != nil {
		return false, err
	}
	intact := func(r *longhorn.Replica) bool {
		return r.DeletionTimestamp == nil && dataPath(r) != ""
	}
	live := 0
	for i := range es {
		if es[i].DeletionTimestamp != nil {
			continue
		}
		live++
		for j := range rs {
			if rs[j].Spec.EngineName == es[i].Name && intact(&rs[j]) {
				return false, nil
			}
		}
	}
	if live > 0 {
		return true, nil
	}
	for j := range rs {
		if intact(&rs[j]) {
			return false, nil
		}
	}
	return true, nil
}
