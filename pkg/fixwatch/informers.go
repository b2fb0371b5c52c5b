package fixwatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// watchedResources are the informers the guard runs; volume attachments
// only on Longhorn 1.5+ (or an unknown version), where they exist; engine
// frontends on 1.12+ (the verdict on a v2 volume rests on them).
func watchedResources(v longhorn.Version) []longhorn.Resource {
	rs := []longhorn.Resource{longhorn.Settings, longhorn.Volumes, longhorn.Engines, longhorn.Replicas}
	if !v.Known() || v.HasVolumeAttachments() {
		rs = append(rs, longhorn.VolumeAttachments)
	}
	if v.HasEngineFrontends() {
		rs = append(rs, longhorn.EngineFrontends)
	}
	return rs
}

// startInformer creates, starts and registers the informer of r. Informers
// re-list and re-watch by themselves (client-go's reflector) after a watch
// expires, the connection drops or the API server restarts; the guard only
// reports those moments and stops on errors that retrying cannot fix.
func (g *Guard) startInformer(ctx context.Context, r longhorn.Resource) (cache.SharedIndexInformer, error) {
	var tweak dynamicinformer.TweakListOptionsFunc
	if r == longhorn.Settings {
		// Only the version setting: no other setting matters to the guard.
		sel := fields.OneTermEqualSelector("metadata.name", longhorn.VersionSetting).String()
		tweak = func(o *metav1.ListOptions) { o.FieldSelector = sel }
	}
	client := &observedClient{Interface: g.client.Dynamic, g: g}
	inf := dynamicinformer.NewFilteredDynamicInformer(client, r.GVR(), g.ns, 0,
		cache.Indexers{volumeIndex: volumeIndexFunc(r)}, tweak).Informer()
	if err := inf.SetTransform(compact(r)); err != nil {
		return nil, err
	}
	if err := inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		g.watchError(r, err)
	}); err != nil {
		return nil, err
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { g.onEvent(r, evAdded, nil, obj, initial) },
		UpdateFunc: func(old, obj any) { g.onEvent(r, evChanged, old, obj, false) },
		DeleteFunc: func(obj any) { g.onEvent(r, evGone, nil, obj, false) },
	})
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.inf[r.Plural] = inf
	g.mu.Unlock()
	go inf.RunWithContext(ctx)
	return inf, nil
}

// Event words. They differ from the words of fix's change lines
// (`engine.longhorn.io "x" deleted`), so that a line says whether the guard
// acted or saw something happen.
const (
	evAdded   = "added"
	evChanged = "changed"
	evGone    = "gone"
)

// informer returns the informer of r, nil when it is not running.
func (g *Guard) informer(r longhorn.Resource) cache.SharedIndexInformer {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inf[r.Plural]
}

// onEvent logs one line per change and queues the volume for
// classification. Objects of the initial list are not logged one by one:
// the start line counts them and every volume is classified.
func (g *Guard) onEvent(r longhorn.Resource, what string, old, obj any, initial bool) {
	m := objectMeta(obj)
	if m == nil {
		return
	}
	if r == longhorn.Settings {
		g.onSetting(what, old, obj, m.GetName(), initial)
		return
	}
	vol := volumeOf(r, obj)
	if vol == "" || !g.selected(vol) {
		return
	}
	if !initial {
		desc := describe(r, obj)
		if what == evChanged && old != nil && describe(r, old) == desc {
			desc = ""
		}
		switch {
		case what == evGone:
			g.out.Printf("%s %q %s (was %s)", r.Qualified(), m.GetName(), what, desc)
		case desc != "":
			g.out.Printf("%s %q %s: %s", r.Qualified(), m.GetName(), what, desc)
		}
	}
	g.queue.Add(vol)
}

// onSetting follows the Longhorn version: an upgrade during the window
// changes what is repairable and how, so every volume is classified again.
func (g *Guard) onSetting(what string, old, obj any, name string, initial bool) {
	if initial || name != longhorn.VersionSetting {
		return
	}
	desc := describe(longhorn.Settings, obj)
	if objectMeta(old) != nil {
		was := describe(longhorn.Settings, old)
		if was == desc {
			return
		}
		desc += " (was " + was + ")"
	}
	g.out.Printf("%s %q %s: %s", longhorn.Settings.Qualified(), name, what, desc)
	v, _ := g.version()
	for _, r := range []longhorn.Resource{longhorn.VolumeAttachments, longhorn.EngineFrontends} {
		has := (r == longhorn.VolumeAttachments && v.HasVolumeAttachments()) || (r == longhorn.EngineFrontends && v.HasEngineFrontends())
		if has && g.informer(r) == nil {
			g.errOut.Printf("Longhorn is now %s: watching %s too", v, r.GroupResource())
			if _, err := g.startInformer(g.infCtx, r); err != nil {
				g.fail(err)
			}
		}
	}
	for _, vol := range g.volumeNames() {
		g.queue.Add(vol)
	}
}

// watchError receives what the reflector could not list or watch.
// Authorization errors end the run with one line naming the verb and the
// resource; other errors are reported once per outage and left to client-go,
// which retries with back-off.
func (g *Guard) watchError(r longhorn.Resource, err error) {
	verb := g.failedVerb(r)
	switch {
	case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
		g.fail(cmdutil.WithCode(cmdutil.ExitNoCheck, cmdutil.Explain(err, verb, r.GroupResource(), g.ns)))
		return
	case errors.Is(err, context.Canceled):
		return
	}
	g.watchEnded(r, verb, err)
}

// interrupted reports, once per outage, that a list or watch of r failed.
func (g *Guard) interrupted(r longhorn.Resource, verb string, err error) {
	if g.outageStarts(r) {
		g.errOut.Printf("warning: the watch on %s was interrupted (%v); client-go lists and watches again by itself",
			r.GroupResource(), cmdutil.Explain(err, verb, r.GroupResource(), g.ns))
	}
}

// outageStarts counts an error of r's watch and tells whether it starts an
// outage (the first error since r was last listed or watched).
func (g *Guard) outageStarts(r longhorn.Resource) (first bool) {
	g.m.watchErrors.WithLabelValues(r.Plural).Inc()
	g.mu.Lock()
	defer g.mu.Unlock()
	first = !g.outage[r.Plural]
	g.outage[r.Plural] = true
	return first
}

// watchEnded reports an error that ended a watch of r: an expired
// resourceVersion (after a long quiet time, or when a restarted API server
// no longer has it), or a lost connection.
func (g *Guard) watchEnded(r longhorn.Resource, verb string, err error) {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		if g.outageStarts(r) {
			g.errOut.Printf("the watch on %s expired (%v); client-go re-lists", r.GroupResource(), cmdutil.OneLine(err))
		}
		return
	}
	g.interrupted(r, verb, err)
}

// resumed is called after every successful list, streaming list or watch
// request of r. After an outage it reports that the watch is back; a list
// after the first one (a re-list, e.g. after an expired resourceVersion) is
// reported too. A plain re-watch after a watch timed out is routine and is
// not.
func (g *Guard) resumed(r longhorn.Resource, list bool) {
	g.mu.Lock()
	if list {
		g.lists[r.Plural]++
	}
	relist := list && g.lists[r.Plural] > 1
	if relist {
		g.m.relists.WithLabelValues(r.Plural).Inc()
	}
	outage := g.outage[r.Plural]
	delete(g.outage, r.Plural)
	g.mu.Unlock()
	switch {
	case outage && relist:
		g.errOut.Printf("%s re-listed after the error above; watching again", r.GroupResource())
	case outage:
		g.errOut.Printf("%s: watching again from the last resourceVersion seen", r.GroupResource())
	case relist:
		g.errOut.Printf("%s re-listed; watching again", r.GroupResource())
	}
}

func (g *Guard) setFailedVerb(r longhorn.Resource, verb string) {
	g.mu.Lock()
	g.lastVerb[r.Plural] = verb
	g.mu.Unlock()
}

func (g *Guard) failedVerb(r longhorn.Resource) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if v := g.lastVerb[r.Plural]; v != "" {
		return v
	}
	return "watch"
}

// observedClient is the dynamic client the informers use, with their lists
// and watches observed: which verb failed (for the error line) and when a
// re-list succeeded (for the "watching again" line). Every other call goes
// straight through.
type observedClient struct {
	dynamic.Interface
	g *Guard
}

func (c *observedClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return &observedResource{NamespaceableResourceInterface: c.Interface.Resource(gvr), gvr: gvr, g: c.g}
}

type observedResource struct {
	dynamic.NamespaceableResourceInterface
	gvr schema.GroupVersionResource
	g   *Guard
}

func (r *observedResource) Namespace(ns string) dynamic.ResourceInterface {
	return &observedNamespaced{ResourceInterface: r.NamespaceableResourceInterface.Namespace(ns), res: resourceOf(r.gvr), g: r.g}
}

type observedNamespaced struct {
	dynamic.ResourceInterface
	res longhorn.Resource
	g   *Guard
}

func (r *observedNamespaced) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := r.ResourceInterface.List(ctx, opts)
	switch {
	case err != nil:
		r.failed(ctx, "list", err)
	case opts.Continue == "":
		r.g.resumed(r.res, true)
	}
	return l, err
}

func (r *observedNamespaced) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := r.ResourceInterface.Watch(ctx, opts)
	streaming := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	if err != nil {
		// A refused streaming list falls back to a plain list by itself;
		// only a lost connection is worth reporting then.
		if !streaming {
			r.failed(ctx, "watch", err)
		} else if !isAPIError(err) {
			r.failed(ctx, "", err)
		}
		return w, err
	}
	r.g.resumed(r.res, streaming)
	var timeout time.Duration
	if opts.TimeoutSeconds != nil {
		timeout = time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	return newObservedWatch(w, timeout, func(err error) {
		if ctx.Err() == nil && r.g.runCtx.Err() == nil {
			r.g.watchEnded(r.res, "watch", err)
		}
	}), nil
}

// observedWatch passes a watch's events through and reports what ends it
// other than its own timeout: an error event (an expired resourceVersion, a
// stream cut by a lost connection) or the server closing it early (an API
// server shutting down closes its watches cleanly). client-go re-lists or
// re-watches then without calling the error handler.
type observedWatch struct {
	watch.Interface
	out     chan watch.Event
	stop    chan struct{}
	once    sync.Once
	stopped atomic.Bool // set before the watch is stopped: its errors are ours
}

func newObservedWatch(w watch.Interface, timeout time.Duration, ended func(error)) *observedWatch {
	ow := &observedWatch{Interface: w, out: make(chan watch.Event), stop: make(chan struct{})}
	opened := time.Now()
	go func() {
		defer close(ow.out)
		defer func() {
			// A watch the server ends well before the timeout the client
			// asked for was not a routine timeout.
			if lasted := time.Since(opened); !ow.stopped.Load() && (timeout == 0 || lasted < timeout-time.Second) {
				ended(fmt.Errorf("the API server closed the watch after %s", cmdutil.Duration(lasted)))
			}
		}()
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error && !ow.stopped.Load() {
				ended(apierrors.FromObject(ev.Object))
			}
			select {
			case ow.out <- ev:
			case <-ow.stop:
				return
			}
			if ev.Type == watch.Error {
				// The reflector stops reading after an error event.
				ow.stopped.Store(true)
			}
		}
	}()
	return ow
}

func (w *observedWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *observedWatch) Stop() {
	w.stopped.Store(true)
	w.once.Do(func() { close(w.stop) })
	w.Interface.Stop()
}

// failed records the verb of a failed request for the error line, and
// reports a lost connection: client-go retries those without telling the
// error handler.
func (r *observedNamespaced) failed(ctx context.Context, verb string, err error) {
	if verb != "" {
		r.g.setFailedVerb(r.res, verb)
	} else {
		verb = "watch"
	}
	if ctx.Err() == nil && !isAPIError(err) {
		r.g.interrupted(r.res, verb, err)
	}
}

// isAPIError: the server answered (with a status), as opposed to a request
// that never reached it or lost its connection.
func isAPIError(err error) bool {
	var s apierrors.APIStatus
	return errors.As(err, &s)
}

func resourceOf(gvr schema.GroupVersionResource) longhorn.Resource {
	for _, r := range longhorn.AllResources {
		if r.Plural == gvr.Resource {
			return r
		}
	}
	return longhorn.Resource{Plural: gvr.Resource, Kind: gvr.Resource}
}
