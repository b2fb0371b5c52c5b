package lhsim

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// FaultKind names a failure the simulator can inject.
type FaultKind string

const (
	// FailEngineDelete makes the volume controller's DELETE of a matching
	// engine fail (an internal server error). Injected on the old engine
	// before a confirm, it produces #6642 on affected releases.
	FailEngineDelete FaultKind = "FailEngineDelete"
	// FailEngineUpdate makes the volume controller's UPDATE of a matching
	// engine fail with a 409 Conflict, as a stale cache would. Longhorn
	// updates an engine right before deleting it, so on the old engine during
	// a confirm this too produces #6642 on affected releases.
	FailEngineUpdate FaultKind = "FailEngineUpdate"
	// FinalizerStuck keeps a deleted matching engine Terminating: its process
	// is cleaned up but the longhorn.io finalizer is not removed.
	FinalizerStuck FaultKind = "FinalizerStuck"
	// MigrationEngineNeverReady keeps a matching inactive engine (a migration
	// engine) from starting: it stays "starting" with no process. Active
	// engines are never affected.
	MigrationEngineNeverReady FaultKind = "MigrationEngineNeverReady"
	// EngineCrash crashes a matching running engine: currentState error, no
	// endpoint, no process. Each crash uses one of Times; a crashed engine
	// stays in error until the volume controller stops it.
	EngineCrash FaultKind = "EngineCrash"
	// OrphanProcess leaves a deleted matching engine's process in its
	// instance manager: the Engine CR goes away, the process stays (an
	// orphan) until KillProcess.
	OrphanProcess FaultKind = "OrphanProcess"
	// HoldVolumeSync keeps the volume controller from syncing a matching
	// volume (Volume "" = every volume) until the fault is cleared, as a
	// busy or restarting longhorn-manager would: tests use it to land a
	// request between a write and Longhorn's next sync. Engine is ignored.
	HoldVolumeSync FaultKind = "HoldVolumeSync"
	// CloneTwice makes the volume controller clone a replica twice for a
	// matching migration engine, as Longhorn's own controller does when its
	// cache lags its own creation: two clones share one data directory.
	// Engine may be a name or ""; roles are not judged.
	CloneTwice FaultKind = "CloneTwice"
	// SnapshotNotSynced keeps the snapshots TakeSnapshot recorded out of a
	// matching running engine's status.snapshots, as an engine whose list
	// has not been refreshed yet: during a migration the migration engine
	// (RoleNew) then lags the serving one, and Longhorn 1.5+ waits to
	// confirm "until snapshots have synced".
	SnapshotNotSynced FaultKind = "SnapshotNotSynced"
)

// held reports whether a HoldVolumeSync fault covers vol.
func (s *Sim) held(vol string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fe := range s.faults {
		if !fe.cleared && fe.f.Kind == HoldVolumeSync && (fe.f.Volume == "" || fe.f.Volume == vol) {
			fe.hits++
			return true
		}
	}
	return false
}

// Engine roles a Fault can target instead of an engine name. Roles are
// judged when the fault would fire, among the volume's engines at that
// moment: with two or more engines the newest (by creation) is RoleNew and
// every other is RoleOld; a lone engine has no role.
const (
	RoleOld = "old"
	RoleNew = "new"
)

// Fault is one injected failure.
type Fault struct {
	Kind FaultKind
	// Volume limits the fault to one volume; "" means any volume.
	Volume string
	// Engine is an engine name, RoleOld, RoleNew, or "" for any engine.
	Engine string
	// Times is how many times the fault fires before it is used up; 0 means
	// until cleared.
	Times int
}

// FaultID identifies an injected fault.
type FaultID int

type faultEntry struct {
	id      FaultID
	f       Fault
	hits    int
	cleared bool
}

// Inject adds a fault; it applies from the next time a controller does what
// it targets. An EngineCrash hits a running engine at once: a process can
// die while nothing else happens to its volume.
func (s *Sim) Inject(f Fault) FaultID {
	s.mu.Lock()
	s.nextFault++
	s.faults = append(s.faults, &faultEntry{id: s.nextFault, f: f})
	id := s.nextFault
	s.mu.Unlock()
	if f.Kind == EngineCrash {
		s.enqueueAll()
	}
	return id
}

// ClearFault removes one fault and makes every controller look at every
// object again (so a stuck finalizer or a failed delete is retried at once).
func (s *Sim) ClearFault(id FaultID) {
	s.mu.Lock()
	for _, fe := range s.faults {
		if fe.id == id {
			fe.cleared = true
		}
	}
	s.mu.Unlock()
	s.enqueueAll()
}

// ClearFaults removes every fault and resyncs everything, as ClearFault.
func (s *Sim) ClearFaults() {
	s.mu.Lock()
	for _, fe := range s.faults {
		fe.cleared = true
	}
	s.mu.Unlock()
	s.enqueueAll()
}

// FaultHits tells how many times a fault fired.
func (s *Sim) FaultHits(id FaultID) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fe := range s.faults {
		if fe.id == id {
			return fe.hits
		}
	}
	return 0
}

// fire reports whether a live fault of kind targets engine e and, if so,
// uses up one of its Times. all lists the engines of e's volume now; it is
// called only when a fault targets a role.
func (s *Sim) fire(kind FaultKind, e *longhorn.Engine, all func() []*longhorn.Engine) bool {
	vol := e.Spec.VolumeName
	if l := e.Labels[longhorn.VolumeLabel]; l != "" {
		vol = l
	}
	live := func(fe *faultEntry) bool {
		f := fe.f
		return !fe.cleared && f.Kind == kind && (f.Times == 0 || fe.hits < f.Times) &&
			(f.Volume == "" || f.Volume == vol) && (f.Engine == "" || f.Engine == e.Name || f.Engine == RoleOld || f.Engine == RoleNew)
	}
	s.mu.Lock()
	needRole, any := false, false
	for _, fe := range s.faults {
		if live(fe) {
			any = true
			needRole = needRole || fe.f.Engine == RoleOld || fe.f.Engine == RoleNew
		}
	}
	s.mu.Unlock()
	if !any {
		return false
	}
	role := ""
	if needRole {
		role = s.roleOf(e, all())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, fe := range s.faults {
		if !live(fe) {
			continue
		}
		if (fe.f.Engine == RoleOld || fe.f.Engine == RoleNew) && fe.f.Engine != role {
			continue
		}
		fe.hits++
		return true
	}
	return false
}

// roleOf judges RoleOld/RoleNew for e among all.
func (s *Sim) roleOf(e *longhorn.Engine, all []*longhorn.Engine) string {
	if len(all) < 2 {
		return ""
	}
	newest := all[0]
	for _, o := range all[1:] {
		if s.olderThan(newest, o) {
			newest = o
		}
	}
	if newest.Name == e.Name {
		return RoleNew
	}
	return RoleOld
}

// olderThan orders engines by creation: the simulator's own creation order
// when it made both, else creationTimestamp, then the deterministic suffix,
// then the name.
func (s *Sim) olderThan(a, b *longhorn.Engine) bool {
	s.mu.Lock()
	sa, oka := s.created[a.Name]
	sb, okb := s.created[b.Name]
	s.mu.Unlock()
	if oka && okb {
		return sa < sb
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	na, oka := a.EngineSuffix()
	nb, okb := b.EngineSuffix()
	if oka && okb && na != nb {
		return na < nb
	}
	return a.Name < b.Name
}

func injectedDeleteError(name string) error {
	return apierrors.NewInternalError(fmt.Errorf("lhsim: injected fault %s on engine %s", FailEngineDelete, name))
}

func injectedConflict(name string) error {
	return apierrors.NewConflict(longhorn.Engines.GVR().GroupResource(), name,
		fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again (lhsim: injected fault %s)", FailEngineUpdate))
}
