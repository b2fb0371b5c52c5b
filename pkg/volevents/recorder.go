// Package volevents records Kubernetes Events (events.k8s.io/v1) on Longhorn
// Volumes for what fix and the guard (fix --watch) did to them, through
// client-go's events broadcaster, and reads a volume's Events back for
// describe. See docs/observability.md.
package volevents

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// Controller is the reportingController of every Event: what
// `kubectl events` and `kubectl describe` show as the source.
const Controller = "longhorn-engines"

// Event types, as Kubernetes spells them.
const (
	Normal  = corev1.EventTypeNormal
	Warning = corev1.EventTypeWarning
)

// Volume names the Volume an Event is about. The uid makes
// `kubectl describe volumes.longhorn.io NAME` find it, as it filters on the
// object's uid.
type Volume struct {
	Namespace, Name string
	UID             types.UID
}

// Recorder records Events on volumes. A nil Recorder records nothing, so
// callers need not check whether Events are on.
type Recorder struct {
	b    events.EventBroadcaster
	rec  events.EventRecorder
	sink *sink
	stop context.CancelFunc
}

// Start starts recording to the API server. It first asks the server, with
// a dry-run create, whether Events may be created in ns: without that
// permission it calls warn once and returns nil (no Events; the caller's
// work goes on).
func Start(ctx context.Context, cfg *rest.Config, ns string, warn func(string)) *Recorder {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		warn(fmt.Sprintf("warning: no Kubernetes Events will be recorded: %v", err))
		return nil
	}
	probe := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: Controller + "-permission-probe-", Namespace: ns},
		EventTime:  metav1.NowMicro(), Type: Normal, Reason: "PermissionProbe", Action: "Probe",
		ReportingController: Controller, ReportingInstance: Controller,
		Regarding: corev1.ObjectReference{APIVersion: longhorn.Group + "/" + longhorn.APIVersionName, Kind: longhorn.Volumes.Kind,
			Namespace: ns, Name: Controller + "-permission-probe"},
	}
	if _, err := c.EventsV1().Events(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: cmdutil.DryRunServer.Sent()}); err != nil {
		// A server that does not serve events.k8s.io/v1 at all (before
		// Kubernetes 1.19, or a bare test server) has nowhere to put them:
		// nothing to warn about.
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case !apierrors.IsInvalid(err): // an invalid probe passed authorization
			warn(noEventsWarning(err, ns))
			return nil
		}
	}
	s := &sink{EventSinkImpl: events.EventSinkImpl{Interface: c.EventsV1()}, warn: warn, ns: ns}
	s.cond = sync.NewCond(&s.mu)
	b := events.NewBroadcaster(s)
	// The broadcaster logs a rejected Event through klog; the sink says it
	// once, in the command's own words.
	rctx, stop := context.WithCancel(klog.NewContext(context.WithoutCancel(ctx), klog.Logger{}))
	if err := b.StartRecordingToSinkWithContext(rctx); err != nil {
		stop()
		warn(fmt.Sprintf("warning: no Kubernetes Events will be recorded: %v", err))
		return nil
	}
	return &Recorder{b: b, rec: b.NewRecorder(scheme.Scheme, Controller), sink: s, stop: stop}
}

func noEventsWarning(err error, ns string) string {
	return fmt.Sprintf("warning: no Kubernetes Events will be recorded (%v); repairs go on, see docs/rbac.md",
		cmdutil.Explain(err, "create", "events.events.k8s.io", ns))
}

// Record records one Event on v. reason is CamelCase, action what was done
// (Deactivate, Delete, Verify, ...), note the human sentence.
func (r *Recorder) Record(v Volume, eventType, reason, action, note string) {
	if r == nil || v.Name == "" {
		return
	}
	ref := &corev1.ObjectReference{
		APIVersion: longhorn.Group + "/" + longhorn.APIVersionName,
		Kind:       longhorn.Volumes.Kind, Namespace: v.Namespace, Name: v.Name, UID: v.UID,
	}
	r.sink.expect(ref, eventType, reason, action)
	// The API server refuses notes over 1 kB.
	if len(note) > 1000 {
		note = safetext.Cut(note, 997) + "..."
	}
	r.rec.Eventf(ref, nil, eventType, reason, action, "%s", note)
}

// Close waits up to timeout for the Events recorded so far to reach the API
// server, then stops the broadcaster. A command that exits right after its
// last repair would otherwise lose the Events of that repair.
func (r *Recorder) Close(timeout time.Duration) {
	if r == nil {
		return
	}
	r.sink.wait(timeout)
	r.stop()
	r.b.Shutdown()
}

// sink is client-go's sink for events.k8s.io/v1, which also counts the
// writes still to come (for Close) and turns the first refusal by the
// server into one warning.
type sink struct {
	events.EventSinkImpl
	warn func(string)
	ns   string

	mu      sync.Mutex
	cond    *sync.Cond
	pending int
	// seen counts the Events per key of client-go's series: the first of a
	// key is created, the second opens a series with a patch, later ones
	// only count up in memory until the broadcaster writes the series.
	seen   map[seriesKey]int
	warned bool
}

type seriesKey struct {
	ref                       corev1.ObjectReference
	eventType, reason, action string
}

func (s *sink) expect(ref *corev1.ObjectReference, eventType, reason, action string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[seriesKey]int{}
	}
	k := seriesKey{*ref, eventType, reason, action}
	s.seen[k]++
	if s.seen[k] <= 2 {
		s.pending++
	}
}

func (s *sink) done(err error) {
	s.mu.Lock()
	if s.pending > 0 {
		s.pending--
	}
	first := err != nil && !s.warned && (apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err))
	if first {
		s.warned = true
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	if first {
		s.warn(noEventsWarning(err, s.ns))
	}
}

func (s *sink) wait(timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer t.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.pending > 0 && time.Now().Before(deadline) {
		s.cond.Wait()
	}
}

func (s *sink) Create(ctx context.Context, e *eventsv1.Event) (*eventsv1.Event, error) {
	out, err := s.EventSinkImpl.Create(ctx, e)
	s.done(err)
	return out, err
}

func (s *sink) Patch(ctx context.Context, e *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	out, err := s.EventSinkImpl.Patch(ctx, e, data)
	if !apierrors.IsNotFound(err) { // then client-go creates it instead
		s.done(err)
	}
	return out, err
}
