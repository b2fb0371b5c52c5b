package lhsim

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Options configure a simulator.
type Options struct {
	// Namespace is the Longhorn namespace to simulate; default longhorn-system.
	// One simulator per namespace: two would fight over the same objects.
	Namespace string
	// Version is the Longhorn release to behave like, e.g. "v1.4.3", "v1.5.1",
	// "v1.4.4", "v1.6.0". It is written into the current-longhorn-version
	// Setting. Required; 1.3.0 and later.
	Version string
	// Logf receives every simulator log line, formatted like longhorn-manager's
	// logrus text output. Default: discard (the lines are kept for Logs anyway).
	Logf func(format string, args ...any)
	// InstanceOnly runs only the instance layer (processes, instance
	// managers, finalizers, the replica data clean-up, the engine image)
	// and emulates Longhorn's mutating webhooks; the volume and
	// VolumeAttachment controllers are left to Longhorn's real ones. See
	// instanceonly.go for which methods still make sense.
	InstanceOnly bool
}

// maxRetries is longhorn-manager's: a volume whose sync keeps failing is
// retried this many times, then dropped until the next informer event.
const maxRetries = 3

// keep at most this many log lines and sync errors per volume.
const keepLines = 500

// Sim simulates longhorn-manager's volume, engine, replica, instance-manager
// and (1.5+) VolumeAttachment controllers against a real API server. All
// methods are safe for concurrent use.
type Sim struct {
	// cached is set once Start's informers have synced: from then on
	// CachedState reads their stores, which other goroutines may do while
	// Start still builds them (the explorer's deletion watch starts first).
	cached       atomic.Bool
	ns           string
	ver          longhorn.Version
	instanceOnly bool
	b            behaviour
	dyn          dynamic.Interface

	httpClient *http.Client

	userLogf func(format string, args ...any)

	queue   workqueue.TypedRateLimitingInterface[string]
	factory dynamicinformer.DynamicSharedInformerFactory
	stores  map[string]cache.Indexer // by plural; engines and replicas indexed byVolume

	// changes: per volume, the sequence number of the last event of its
	// Volume, Engines or Replicas (ChangedSince).
	changes   map[string]uint64
	changeSeq uint64

	mu         sync.Mutex
	started    bool
	stopped    bool
	cancel     context.CancelFunc
	workerDone chan struct{}
	changed    chan struct{}

	faults    []*faultEntry
	snaps     map[string][]string // volume → user snapshots taken (TakeSnapshot)
	nextFault FaultID

	procs   map[string]*process        // instance name → process
	wiped   map[string]string          // data path → volume
	tickets map[string]map[string]memo // VA → ticket id → what the webhook saw

	logs         []logLine
	syncErrs     map[string][]string
	syncErrCount map[string]int
	lastSyncErr  map[string]string

	admitted  map[string]bool     // "<plural>/<name>" the emulated webhook saw created
	placement map[string][]string // volume → replica nodes asked by CreateVolume
	created   map[string]uint64   // engine → creation sequence, for roles
	seq       uint64
	rng       *rand.Rand
}

type logLine struct {
	vol  string
	text string
}

// behaviour is what differs between Longhorn releases, decided once.
type behaviour struct {
	affected        bool // #6642: activate before cleaning up (≤1.4.3, 1.5.0–1.5.1, 1.3.x)
	va              bool // VolumeAttachment CRs drive attachment (1.5+)
	cmn             bool // status.currentMigrationNodeID exists (1.5+)
	deterministic   bool // <vol>-e-N engine names (1.4.4, 1.5.2+)
	healthyAtFlip   bool // confirm activates only replicas with healthyAt (1.5.3+, 1.6+)
	wipeSoleDir     bool // deleting an inactive replica also wipes a directory nobody else uses (1.5.3+)
	confirmWaitsEng bool // VA confirm waits for an available migration engine (1.7+)
	ticketLimits    bool // webhook limits csi tickets (1.7+)
	readyTarget     bool // migration start waits for a Ready target (1.11.3, 1.12.1+)
	aioIM           bool // one aio instance manager per node (1.5+)
	imageField      string
	dataEngineField string // "" (≤1.4), backendStoreDriver (1.5), dataEngine (1.6+)
	logStyle        int    // 0: ≤1.4.3 warning, 1: 1.5.0/1.5.1 error with key, 2: fixed releases
}

func behaviourOf(v longhorn.Version) behaviour {
	b := behaviour{
		affected:        v.Affected(),
		va:              v.HasVolumeAttachments(),
		cmn:             v.HasCurrentMigrationNodeID(),
		deterministic:   v.DeterministicEngineNames(),
		healthyAtFlip:   v.AtLeast(1, 5, 3),
		wipeSoleDir:     v.AtLeast(1, 5, 3),
		confirmWaitsEng: v.AtLeast(1, 7, 0),
		ticketLimits:    v.TicketLimits(),
		readyTarget:     v.MigrationNeedsReadyTarget(),
		aioIM:           v.AtLeast(1, 5, 0),
		imageField:      "engineImage",
	}
	if v.AtLeast(1, 6, 0) {
		b.imageField = "image"
		b.dataEngineField = "dataEngine"
	} else if v.AtLeast(1, 5, 0) {
		b.dataEngineField = "backendStoreDriver"
	}
	switch {
	case v.Class() == longhorn.ClassL15a:
		b.logStyle = 1
	case v.Affected():
		b.logStyle = 0
	default:
		b.logStyle = 2
	}
	return b
}

// New returns a simulator for cfg's API server. It does nothing until Start.
func New(cfg *rest.Config, opts Options) (*Sim, error) {
	if opts.Version == "" {
		return nil, errors.New("lhsim: Options.Version is required")
	}
	v, err := longhorn.ParseVersion(opts.Version)
	if err != nil {
		return nil, fmt.Errorf("lhsim: %w", err)
	}
	if c := v.Class(); c == longhorn.ClassUnknown || c == longhorn.ClassUnsupported {
		return nil, fmt.Errorf("lhsim: Longhorn %s is not simulated (1.3.0 and later are)", v)
	}
	if opts.Namespace == "" {
		opts.Namespace = longhorn.DefaultNamespace
	}
	c := rest.CopyConfig(cfg)
	c.QPS = -1 // no client-side throttling: the simulator is the only load
	// A connection of its own: client-go otherwise shares one HTTP/2
	// connection among all clients of a server, and the simulator's watches
	// and writes would queue behind everybody else's. (A Proxy function
	// keeps client-go from caching the transport.)
	c.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	hc, err := rest.HTTPClientFor(c)
	if err != nil {
		return nil, fmt.Errorf("lhsim: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(c, hc)
	if err != nil {
		return nil, fmt.Errorf("lhsim: %w", err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(opts.Namespace + "/" + v.String()))
	seed := h.Sum64()
	s := &Sim{
		ns:           opts.Namespace,
		ver:          v,
		instanceOnly: opts.InstanceOnly,
		b:            behaviourOf(v),
		dyn:          dyn,
		httpClient:   hc,
		userLogf:     opts.Logf,
		changed:      make(chan struct{}),
		procs:        map[string]*process{},
		wiped:        map[string]string{},
		tickets:      map[string]map[string]memo{},
		syncErrs:     map[string][]string{},
		syncErrCount: map[string]int{},
		lastSyncErr:  map[string]string{},
		placement:    map[string][]string{},
		created:      map[string]uint64{},
		rng:          rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
	return s, nil
}

// Version is the simulated Longhorn release.
func (s *Sim) Version() longhorn.Version { return s.ver }

// Namespace is the simulated Longhorn namespace.
func (s *Sim) Namespace() string { return s.ns }

// watched lists the resources the controllers react to.
func (s *Sim) watched() []longhorn.Resource {
	rs := []longhorn.Resource{longhorn.Volumes, longhorn.Engines, longhorn.Replicas, longhorn.Nodes, longhorn.InstanceManagers}
	if s.b.va {
		rs = append(rs, longhorn.VolumeAttachments)
	}
	return rs
}

// Start writes the current-longhorn-version Setting, starts informers on the
// namespace and one controller worker, and returns once the caches are
// synced. The simulator runs until Stop or until ctx is cancelled.
func (s *Sim) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("lhsim: already started")
	}
	s.started = true
	s.mu.Unlock()

	if err := s.writeVersionSetting(ctx); err != nil {
		return err
	}
	if s.instanceOnly {
		if err := s.writeEngineImage(ctx); err != nil {
			return err
		}
	}

	runCtx, cancel := context.WithCancel(ctx)
	s.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 200*time.Millisecond),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "lhsim-" + s.ns},
	)
	s.factory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(s.dyn, 0, s.ns, nil)
	s.stores = map[string]cache.Indexer{}
	for _, r := range s.watched() {
		inf := s.factory.ForResource(r.GVR()).Informer()
		plural := r.Plural
		if r == longhorn.Engines || r == longhorn.Replicas {
			if err := inf.AddIndexers(cache.Indexers{byVolume: indexByVolume}); err != nil {
				cancel()
				return fmt.Errorf("lhsim: %w", err)
			}
		}
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { s.onEvent(plural, obj, false) },
			UpdateFunc: func(_, obj any) { s.onEvent(plural, obj, false) },
			DeleteFunc: func(obj any) { s.onEvent(plural, obj, true) },
		})
		if err != nil {
			cancel()
			return fmt.Errorf("lhsim: %w", err)
		}
		s.stores[plural] = inf.GetIndexer()
	}
	s.factory.Start(runCtx.Done())
	for gvr, ok := range s.factory.WaitForCacheSync(runCtx.Done()) {
		if !ok {
			cancel()
			s.queue.ShutDown()
			s.factory.Shutdown()
			return fmt.Errorf("lhsim: cache of %s did not sync", gvr.Resource)
		}
	}
	s.cached.Store(true)
	done := make(chan struct{})
	s.mu.Lock()
	s.cancel = cancel
	s.workerDone = done
	s.mu.Unlock()
	s.queue.Add(keyIM)
	go func() {
		defer close(done)
		s.worker(runCtx)
	}()
	go func() {
		<-runCtx.Done()
		s.queue.ShutDown()
	}()
	return nil
}

// Stop stops the controllers and informers and waits for them. Objects are
// left as they are (engines keep their finalizers).
func (s *Sim) Stop() {
	s.mu.Lock()
	if s.stopped || !s.started {
		s.stopped = true
		s.mu.Unlock()
		return
	}
	s.stopped = true
	cancel, done := s.cancel, s.workerDone
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if s.queue != nil {
		s.queue.ShutDown()
	}
	if done != nil {
		<-done
	}
	if s.factory != nil {
		s.factory.Shutdown()
	}
	s.httpClient.CloseIdleConnections()
}

func (s *Sim) writeVersionSetting(ctx context.Context) error {
	cl := s.client(longhorn.Settings)
	for range 5 {
		u, err := cl.Get(ctx, longhorn.VersionSetting, metav1.GetOptions{})
		if isNotFound(err) {
			u = newObject(longhorn.Settings.Kind, s.ns, longhorn.VersionSetting)
			u.Object["value"] = s.ver.String()
			_, err = cl.Create(ctx, u, metav1.CreateOptions{})
		} else if err == nil {
			if v, _, _ := unstructured.NestedString(u.Object, "value"); v == s.ver.String() {
				return nil
			}
			u.Object["value"] = s.ver.String()
			_, err = cl.Update(ctx, u, metav1.UpdateOptions{})
		}
		if err == nil {
			return nil
		}
		if !isConflict(err) && !isAlreadyExists(err) {
			return fmt.Errorf("lhsim: write setting %s: %w", longhorn.VersionSetting, err)
		}
	}
	return fmt.Errorf("lhsim: write setting %s: too many conflicts", longhorn.VersionSetting)
}

// Work-queue keys: "<kind>/<name>", and keyIM for all instance managers.
const (
	kindVolume  = "volume"
	kindVA      = "va"
	kindEngine  = "engine"
	kindReplica = "replica"
	keyIM       = "im"
)

func key(kind, name string) string { return kind + "/" + name }

func (s *Sim) enqueue(keys ...string) {
	for _, k := range keys {
		s.queue.Add(k)
	}
}

// onEvent maps an informer event to the keys of the controllers that care,
// and wakes WaitFor callers.
func (s *Sim) onEvent(plural string, obj any, deleted bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	name := u.GetName()
	switch plural {
	case longhorn.Volumes.Plural:
		s.touch(name)
		s.enqueue(key(kindVolume, name))
		if s.b.va {
			s.enqueue(key(kindVA, name))
		}
	case longhorn.Engines.Plural:
		vol := volumeOf(u)
		s.touch(vol)
		s.enqueue(key(kindEngine, name), key(kindVolume, vol))
		if s.b.va {
			s.enqueue(key(kindVA, vol))
		}
		if deleted {
			s.enqueue(keyIM)
		}
	case longhorn.Replicas.Plural:
		vol := volumeOf(u)
		s.touch(vol)
		s.enqueue(key(kindReplica, name), key(kindVolume, vol))
		// engines report their replicas' modes
		for _, o := range s.ofVolume(longhorn.Engines, vol) {
			s.enqueue(key(kindEngine, o.GetName()))
		}
		if deleted {
			s.enqueue(keyIM)
		}
	case longhorn.VolumeAttachments.Plural:
		v, _, _ := unstructured.NestedString(u.Object, "spec", "volume")
		if v == "" {
			v = name
		}
		s.enqueue(key(kindVA, v))
	case longhorn.Nodes.Plural:
		s.enqueueAll()
	case longhorn.InstanceManagers.Plural:
		s.enqueue(keyIM)
	}
	s.broadcast()
}

// enqueueAll queues every object the controllers know of.
func (s *Sim) enqueueAll() {
	if s.stores == nil || s.queue == nil {
		return
	}
	for plural, kind := range map[string]string{
		longhorn.Volumes.Plural:  kindVolume,
		longhorn.Engines.Plural:  kindEngine,
		longhorn.Replicas.Plural: kindReplica,
	} {
		for _, o := range s.stores[plural].List() {
			if u, ok := o.(*unstructured.Unstructured); ok {
				s.enqueue(key(kind, u.GetName()))
				if kind == kindVolume && s.b.va {
					s.enqueue(key(kindVA, u.GetName()))
				}
			}
		}
	}
	s.enqueue(keyIM)
}

// touch records an event of vol's objects (ChangedSince).
func (s *Sim) touch(vol string) {
	s.mu.Lock()
	s.changeSeq++
	if s.changes == nil {
		s.changes = map[string]uint64{}
	}
	s.changes[vol] = s.changeSeq
	s.mu.Unlock()
}

// ChangedSince lists, sorted, the volumes whose Volume, Engines or
// Replicas the simulator's informers saw change (created, updated or
// deleted) after mark, and the mark to pass next time; mark 0 takes every
// change since Start. It reads no object: a caller that polls for quiet
// costs nothing per volume that stays still.
func (s *Sim) ChangedSince(mark uint64) ([]string, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for vol, seq := range s.changes {
		if seq > mark {
			out = append(out, vol)
		}
	}
	sort.Strings(out)
	return out, s.changeSeq
}

func (s *Sim) broadcast() {
	s.mu.Lock()
	s.wakeLocked()
	s.mu.Unlock()
}

func (s *Sim) wakeLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Sim) changedCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *Sim) worker(ctx context.Context) {
	for {
		k, quit := s.queue.Get()
		if quit {
			return
		}
		err := s.process(ctx, k)
		s.handleErr(ctx, k, err)
		s.queue.Done(k)
	}
}

func (s *Sim) process(ctx context.Context, k string) error {
	if k == keyIM {
		return s.syncInstanceManagers(ctx)
	}
	kind, name, _ := strings.Cut(k, "/")
	if name == "" {
		return nil
	}
	if s.instanceOnly {
		switch kind {
		case kindVolume:
			return s.admitVolume(ctx, name)
		case kindVA:
			return s.admitVolumeAttachment(ctx, name)
		case kindEngine:
			if done, err := s.admit(ctx, longhorn.Engines, name); done || err != nil {
				return err
			}
		case kindReplica:
			if done, err := s.admit(ctx, longhorn.Replicas, name); done || err != nil {
				return err
			}
		}
	}
	switch kind {
	case kindVolume:
		if s.held(name) {
			return nil // ClearFault enqueues every object again
		}
		return s.syncVolume(ctx, name)
	case kindVA:
		return s.syncVolumeAttachment(ctx, name)
	case kindEngine:
		return s.syncEngine(ctx, name)
	case kindReplica:
		return s.syncReplica(ctx, name)
	}
	return nil
}

// handleErr requeues like longhorn-manager: failed volume syncs are logged
// and retried maxRetries times, then dropped until the next event; the
// other controllers simply retry with backoff.
func (s *Sim) handleErr(ctx context.Context, k string, err error) {
	if ctx.Err() != nil {
		return
	}
	kind, name, _ := strings.Cut(k, "/")
	if kind != kindVolume || s.instanceOnly {
		if err == nil {
			s.queue.Forget(k)
			return
		}
		s.log("debug", volForKey(kind, name), "Requeue after error", "controller", "lhsim-"+kind, "key", k, "error", err.Error())
		s.queue.AddRateLimited(k)
		return
	}
	if err == nil {
		s.queue.Forget(k)
		s.mu.Lock()
		if s.lastSyncErr[name] != "" {
			s.lastSyncErr[name] = ""
			s.wakeLocked()
		}
		s.mu.Unlock()
		return
	}
	s.recordSyncError(name, err)
	dropping := s.queue.NumRequeues(k) >= maxRetries
	s.logVolumeSyncError(ctx, name, err, dropping)
	if dropping {
		s.queue.Forget(k)
		return
	}
	s.queue.AddRateLimited(k)
}

func volForKey(kind, name string) string {
	if kind == kindVolume || kind == kindVA {
		return name
	}
	return ""
}

func (s *Sim) recordSyncError(vol string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := append(s.syncErrs[vol], err.Error())
	if len(l) > keepLines {
		l = l[len(l)-keepLines:]
	}
	s.syncErrs[vol] = l
	s.syncErrCount[vol]++
	s.lastSyncErr[vol] = err.Error()
	s.wakeLocked()
}

// logVolumeSyncError writes the line longhorn-manager's handleErr writes,
// in the format of the simulated release.
func (s *Sim) logVolumeSyncError(ctx context.Context, vol string, err error, dropping bool) {
	owner := ""
	if u, gerr := s.getU(ctx, longhorn.Volumes, vol); gerr == nil {
		owner, _, _ = unstructured.NestedString(u.Object, "status", "ownerID")
	}
	k := s.ns + "/" + vol
	switch s.b.logStyle {
	case 0:
		msg := "Error syncing Longhorn volume " + k
		if dropping {
			msg = "Dropping Longhorn volume " + k + " out of the queue"
		}
		s.log("warning", vol, msg, "controller", "longhorn-volume", "node", owner, "error", err.Error())
	case 1:
		msg := "Failed to sync Longhorn volume " + k
		if dropping {
			msg = "Dropping Longhorn volume " + k + " out of the queue"
		}
		s.log("error", vol, msg, "controller", "longhorn-volume", "node", owner, "error", err.Error())
	default:
		msg := "Failed to sync Longhorn volume"
		if dropping {
			msg = "Dropping Longhorn volume out of the queue"
		}
		level := "error"
		if isConflict(err) {
			level = "debug"
		}
		s.log(level, vol, msg, "Volume", k, "controller", "longhorn-volume", "node", owner,
			"error", err.Error(), "func", "controller.handleReconcileErrorLogging", "file", "utils.go:19")
	}
}

// log records one logrus-style line: time, level, msg, then fields sorted
// by key as logrus's text formatter does.
func (s *Sim) log(level, vol, msg string, kv ...string) {
	var b strings.Builder
	fmt.Fprintf(&b, "time=%q level=%s msg=%q", time.Now().UTC().Format(time.RFC3339Nano), level, msg)
	type field struct{ k, v string }
	var fs []field
	for i := 0; i+1 < len(kv); i += 2 {
		fs = append(fs, field{kv[i], kv[i+1]})
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].k < fs[j].k })
	for _, f := range fs {
		fmt.Fprintf(&b, " %s=%s", f.k, quoteLogValue(f.v))
	}
	line := b.String()
	s.mu.Lock()
	s.logs = append(s.logs, logLine{vol: vol, text: line})
	if len(s.logs) > 20*keepLines {
		s.logs = s.logs[len(s.logs)-10*keepLines:]
	}
	s.wakeLocked()
	s.mu.Unlock()
	if s.userLogf != nil {
		s.userLogf("%s", line)
	}
}

// vlog logs for the volume controller of vol.
func (s *Sim) vlog(level string, v *longhorn.Volume, msg string, kv ...string) {
	kv = append(kv, "controller", "longhorn-volume", "node", v.Status.OwnerID, "volume", v.Name)
	s.log(level, v.Name, msg, kv...)
}

// Logs returns the simulator log lines about vol (every line when vol is "").
func (s *Sim) Logs(vol string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.logs {
		if vol == "" || l.vol == vol {
			out = append(out, l.text)
		}
	}
	return out
}

// SyncErrors returns the errors of vol's failed volume-controller syncs, the
// text longhorn-manager logs as error="…" (the most recent keepLines).
func (s *Sim) SyncErrors(vol string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.syncErrs[vol]...)
}

// SyncErrorCount counts vol's failed volume-controller syncs.
func (s *Sim) SyncErrorCount(vol string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncErrCount[vol]
}

// LastSyncError is the error of vol's latest volume-controller sync, "" when
// it succeeded (or never ran).
func (s *Sim) LastSyncError(vol string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastSyncErr[vol]
}

// State reads a volume with its engines and replicas (sorted by name) live
// from the API server.
func (s *Sim) State(ctx context.Context, vol string) (*longhorn.Volume, []longhorn.Engine, []longhorn.Replica, error) {
	return s.state(ctx, vol, true)
}

// CachedState is State as the simulator's informers last saw it (live
// before Start): a read that costs no request, for callers that look at a
// volume on every event of another.
func (s *Sim) CachedState(ctx context.Context, vol string) (*longhorn.Volume, []longhorn.Engine, []longhorn.Replica, error) {
	return s.state(ctx, vol, false)
}

func (s *Sim) state(ctx context.Context, vol string, live bool) (*longhorn.Volume, []longhorn.Engine, []longhorn.Replica, error) {
	get, list := s.getU, s.listOf
	if live || !s.cached.Load() {
		get, list = s.getLive, s.listOfLive
	}
	vu, err := get(ctx, longhorn.Volumes, vol)
	if err != nil {
		return nil, nil, nil, err
	}
	v := &longhorn.Volume{}
	if err := decode(vu, v); err != nil {
		return nil, nil, nil, err
	}
	es, err := list(ctx, longhorn.Engines, vol)
	if err != nil {
		return nil, nil, nil, err
	}
	rs, err := list(ctx, longhorn.Replicas, vol)
	if err != nil {
		return nil, nil, nil, err
	}
	engines, err := decodeAll[longhorn.Engine](es)
	if err != nil {
		return nil, nil, nil, err
	}
	replicas, err := decodeAll[longhorn.Replica](rs)
	if err != nil {
		return nil, nil, nil, err
	}
	return v, engines, replicas, nil
}

// listOf lists the engines or replicas of a volume (from the cache),
// sorted by name.
func (s *Sim) listOf(ctx context.Context, r longhorn.Resource, vol string) ([]unstructured.Unstructured, error) {
	if s.store(r) == nil {
		return s.listOfLive(ctx, r, vol)
	}
	var items []unstructured.Unstructured
	for _, u := range s.ofVolume(r, vol) {
		items = append(items, *u.DeepCopy())
	}
	sort.Slice(items, func(i, j int) bool { return items[i].GetName() < items[j].GetName() })
	return items, nil
}

// byVolume indexes engines and replicas by the volume they belong to.
const byVolume = "volume"

func indexByVolume(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	return []string{volumeKey(u)}, nil
}

// ofVolume is vol's engines or replicas in the cache, not copied: callers
// only read them.
func (s *Sim) ofVolume(r longhorn.Resource, vol string) []*unstructured.Unstructured {
	st := s.store(r)
	if st == nil {
		return nil
	}
	objs, err := st.ByIndex(byVolume, vol)
	if err != nil {
		return nil
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out
}

// listOfLive lists the engines or replicas of a volume live.
func (s *Sim) listOfLive(ctx context.Context, r longhorn.Resource, vol string) ([]unstructured.Unstructured, error) {
	all, err := s.listLive(ctx, r)
	return filterVolume(all, vol), err
}

func filterVolume(all []unstructured.Unstructured, vol string) []unstructured.Unstructured {
	var out []unstructured.Unstructured
	for i := range all {
		if belongsTo(&all[i], vol) {
			out = append(out, all[i])
		}
	}
	return out
}

// WaitFor waits until cond holds for the volume, its engines and replicas.
// It re-evaluates cond whenever the simulator sees a change (no polling):
// first on its informer caches, then, when that holds, on a live read from
// the API server, which is what counts. It gives up when ctx ends, with the
// last state seen in the error.
func (s *Sim) WaitFor(ctx context.Context, vol string, cond func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool) error {
	var last string
	for {
		ch := s.changedCh()
		v, es, rs, err := s.state(ctx, vol, false)
		if err == nil && cond(v, es, rs) {
			v, es, rs, err = s.state(ctx, vol, true)
			if err == nil && cond(v, es, rs) {
				return nil
			}
		}
		if err == nil {
			last = Describe(v, es, rs)
		} else if ctx.Err() == nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lhsim: waiting for volume %s: %w; last state:\n%s", vol, ctx.Err(), last)
		case <-ch:
		}
	}
}

// Await waits until cond returns true. cond is evaluated now and again
// whenever a watched object changes or the simulator logs or records an
// error (no polling); Await gives up when ctx ends.
func (s *Sim) Await(ctx context.Context, cond func() bool) error {
	for {
		ch := s.changedCh()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lhsim: %w", ctx.Err())
		case <-ch:
		}
	}
}

// VolumeAttachment returns the volume's VolumeAttachment (1.5+) as the
// simulator's cache has it.
func (s *Sim) VolumeAttachment(ctx context.Context, vol string) (*longhorn.VolumeAttachment, error) {
	_, va, err := getAs[longhorn.VolumeAttachment](ctx, s, longhorn.VolumeAttachments, vol)
	return va, err
}

// Describe renders a volume, its engines and replicas in a few lines, for
// test failure messages.
func Describe(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) string {
	var b strings.Builder
	if v != nil {
		fmt.Fprintf(&b, "volume %s: spec.nodeID=%q migrationNodeID=%q state=%s robustness=%s currentNodeID=%q currentMigrationNodeID=%q owner=%q\n",
			v.Name, v.Spec.NodeID, v.Spec.MigrationNodeID, v.Status.State, v.Status.Robustness, v.Status.CurrentNodeID, v.Status.CurrentMigrationNodeID, v.Status.OwnerID)
	}
	for _, e := range es {
		fmt.Fprintf(&b, "  engine %s: active=%v node=%q desire=%s state=%s endpoint=%q modes=%v%s\n",
			e.Name, e.Spec.Active, e.Spec.NodeID, e.Spec.DesireState, e.Status.CurrentState, e.Status.Endpoint, e.Status.ReplicaModeMap, deleting(e.DeletionTimestamp))
	}
	for _, r := range rs {
		fmt.Fprintf(&b, "  replica %s: active=%v engine=%s node=%q dir=%s desire=%s state=%s%s\n",
			r.Name, r.Spec.Active, r.Spec.EngineName, r.Spec.NodeID, r.Spec.DataDirectoryName, r.Spec.DesireState, r.Status.CurrentState, deleting(r.DeletionTimestamp))
	}
	return b.String()
}

// deleting marks an object Describe shows as being deleted.
func deleting(ts *metav1.Time) string {
	if ts != nil {
		return " DELETING"
	}
	return ""
}

// randomHex returns 8 hex characters, as Longhorn's util.RandomID gives.
func (s *Sim) randomHex() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%08x", s.rng.Uint32())
}
