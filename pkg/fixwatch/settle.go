package fixwatch

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
)

// signature pins a repairable state: the engine to keep, the objects fix
// would change (by uid, so a re-created object of the same name is a new
// state: the stale engines, or for set-replicas the replicas it repoints)
// and the action detect chose. The settle time restarts whenever it
// changes.
type signature struct {
	keep    string
	changed string
	action  detect.Action
}

func (s signature) empty() bool { return s.keep == "" }

// signatureOf is the signature of a finding that fix would act on, and the
// zero signature for anything else: healthy volumes, migrations in flight,
// confirms still finishing, pending clean-ups, refused or fixed-release
// findings. Two kinds are repaired: two active engines (#6642), by
// deactivating or deleting the stale ones, and replicas left active for an
// engine that is gone (DanglingReplicas), by repointing them. The survivor
// and the objects changed must all be among the objects the finding pinned.
func signatureOf(f *detect.Finding) signature {
	if f == nil || f.Refused() || f.Keep == "" {
		return signature{}
	}
	var uids []string
	switch {
	case f.Type == detect.TypeMultipleActiveEngines && (f.Action == detect.ActionDeactivate || f.Action == detect.ActionDelete):
		for _, n := range f.Stale {
			e, _ := f.Objects.Engine(n)
			uids = append(uids, e.UID)
		}
	case f.Type == detect.TypeDanglingReplicas && f.Action == detect.ActionSetReplicas:
		for _, c := range f.ReplicaChanges {
			r, _ := f.Objects.Replica(c.Replica)
			uids = append(uids, r.UID)
		}
	default:
		return signature{}
	}
	keep, _ := f.Objects.Engine(f.Keep)
	if keep.UID == "" || len(uids) == 0 || slices.Contains(uids, "") {
		return signature{}
	}
	return newSignature(keep.UID, uids, f.Action)
}

// plannedSignature is the same signature computed from fix's fresh plan, so
// the guard acts only when the API server agrees with its caches.
func plannedSignature(p fix.Planned) signature {
	if p.Finding == nil || !p.Acts() {
		return signature{}
	}
	var uids []string
	if p.Action == detect.ActionSetReplicas {
		for _, r := range p.Replicas {
			uids = append(uids, r.UID)
		}
	} else {
		for _, e := range p.Stale {
			uids = append(uids, e.UID)
		}
	}
	return newSignature(p.Keep.UID, uids, p.Finding.Action)
}

func newSignature(keep string, uids []string, a detect.Action) signature {
	uids = slices.Clone(uids)
	sort.Strings(uids)
	return signature{keep: keep, changed: strings.Join(uids, ","), action: a}
}

// maxAttempts bounds the repairs of one state that end skipped or failed:
// the state moved under the guard, or a read or write failed. Each attempt
// waits the settle time again.
const maxAttempts = 3

// volState is what the guard remembers about one volume.
type volState struct {
	class     string // classification last reported
	pendClass string // a classification waiting to be reported
	pendSince time.Time
	sig       signature
	since     time.Time // when sig was first seen (or a retry was scheduled)
	repairing bool
	attempts  int
	// final is the last outcome that ends the guard's work on finalSig.
	final    *fix.Outcome
	finalSig signature
}

// tracker applies the settle rule per volume. It is driven by the guard's
// single worker and by repair completions, under the guard's lock; it has
// no clock of its own, so tests hand it times.
type tracker struct {
	settle time.Duration
	vols   map[string]*volState
}

func newTracker(settle time.Duration) *tracker {
	return &tracker{settle: settle, vols: map[string]*volState{}}
}

func (t *tracker) get(vol string) *volState {
	vs := t.vols[vol]
	if vs == nil {
		vs = &volState{}
		t.vols[vol] = vs
	}
	return vs
}

// step is what to do after an observation.
type step struct {
	// repair: start a repair now (the tracker marks the volume repairing).
	repair bool
	// wait: look again after this long (the state has not settled yet).
	wait time.Duration
}

// observe records the volume's signature as seen at now.
func (t *tracker) observe(vol string, now time.Time, sig signature) step {
	vs := t.get(vol)
	if sig.empty() {
		vs.sig, vs.attempts = signature{}, 0
		return step{}
	}
	if sig != vs.sig {
		vs.sig, vs.since, vs.attempts = sig, now, 0
	}
	if vs.repairing || (vs.final != nil && vs.finalSig == sig) {
		return step{}
	}
	if waited := now.Sub(vs.since); waited < t.settle {
		return step{wait: t.settle - waited}
	}
	vs.repairing = true
	return step{repair: true}
}

// since is when the volume's current repairable state was first seen.
func (t *tracker) since(vol string) time.Time { return t.get(vol).since }

// finished records a repair's outcome. A skipped or failed repair of the
// same state is tried again after another settle time, up to maxAttempts;
// any other outcome ends the guard's work on that state.
func (t *tracker) finished(vol string, sig signature, out fix.Outcome, now time.Time) (retry bool) {
	vs := t.get(vol)
	vs.repairing = false
	if (out.Result == fix.ResultSkipped || out.Result == fix.ResultFailed) && vs.sig == sig && vs.attempts+1 < maxAttempts {
		vs.attempts++
		vs.since = now
		return true
	}
	o := out
	vs.final, vs.finalSig = &o, sig
	return false
}

// report decides whether to report a classification (by key) now. Info
// states and repairable states are reported at once; anything else (a
// warning or worse that the guard will not repair) only once it has lasted
// the settle time: while a normal confirm runs, the caches of volumes and
// engines catch up at different moments, and the mixed views in between
// must not read as alarms. wait > 0 asks to look again then.
func (t *tracker) report(vol, key string, delay bool, now time.Time) (report bool, previous string, lasted, wait time.Duration) {
	vs := t.get(vol)
	if key == vs.class {
		vs.pendClass = ""
		return false, vs.class, 0, 0
	}
	if delay {
		if vs.pendClass != key {
			vs.pendClass, vs.pendSince = key, now
		}
		lasted = now.Sub(vs.pendSince)
		if lasted < t.settle {
			return false, vs.class, 0, t.settle - lasted
		}
	}
	previous, vs.class, vs.pendClass = vs.class, key, ""
	return true, previous, lasted, 0
}

// forget drops a volume that is gone.
func (t *tracker) forget(vol string) { delete(t.vols, vol) }
