package fixwatch

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// A watch the server closes long before its timeout is reported (an API
// server going away closes watches cleanly); one the client stops, or that
// reaches its timeout, is not; an error event is passed on and reported.
func TestObservedWatchReportsEarlyClose(t *testing.T) {
	var mu sync.Mutex
	var ended []string
	report := func(err error) { mu.Lock(); ended = append(ended, err.Error()); mu.Unlock() }
	got := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), ended...) }

	// Closed by the server after 0s of a 5m watch.
	fw := watch.NewFake()
	ow := newObservedWatch(fw, 5*time.Minute, report)
	fw.Stop()
	if _, ok := <-ow.ResultChan(); ok {
		t.Fatal("event from a closed watch")
	}
	if e := got(); len(e) != 1 || !strings.Contains(e[0], "the API server closed the watch after") {
		t.Errorf("early close: %v", e)
	}

	// Stopped by the client: nothing to report.
	fw = watch.NewFake()
	ow = newObservedWatch(fw, 5*time.Minute, report)
	ow.Stop()
	for range ow.ResultChan() {
	}
	if e := got(); len(e) != 1 {
		t.Errorf("client stop reported: %v", e)
	}

	// An error event (an expired resourceVersion) is passed through and
	// reported once, not again when the stream then closes.
	fw = watch.NewFake()
	ow = newObservedWatch(fw, 5*time.Minute, report)
	gone := apierrors.NewResourceExpired("too old resource version: 1 (2)")
	go fw.Error(&gone.ErrStatus)
	ev := <-ow.ResultChan()
	if ev.Type != watch.Error {
		t.Fatalf("event %v", ev.Type)
	}
	fw.Stop()
	for range ow.ResultChan() {
	}
	if e := got(); len(e) != 2 || !strings.Contains(e[1], "too old resource version") {
		t.Errorf("error event: %v", e)
	}
}

// engineOutage plays an outage of the engines watch after its first list:
// the watch is cut and a list fails, the watch comes back, then expires and
// is re-listed twice.
func engineOutage(g *Guard) {
	eng := longhorn.Engines
	g.interrupted(eng, "watch", errors.New("connection refused"))
	g.interrupted(eng, "list", errors.New("connection refused"))
	g.resumed(eng, false)
	g.watchEnded(eng, "watch", apierrors.NewResourceExpired("too old resource version"))
	g.resumed(eng, true)
	g.resumed(eng, true)
}

// Outages are reported once, with the verb, and so is the recovery; an
// expired watch says so; a re-list after the first list is reported.
func TestWatchOutageLines(t *testing.T) {
	var buf bytes.Buffer
	g := New(Config{Namespace: "longhorn-system"}, newStamper(&bytes.Buffer{}), newStamper(&buf))
	eng := longhorn.Engines
	g.resumed(eng, true) // the first list: silent
	engineOutage(g)
	g.resumed(eng, false)

	var lines []string
	for _, l := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		_, text, _ := strings.Cut(l, " ")
		lines = append(lines, text)
	}
	want := []string{
		`warning: the watch on engines.longhorn.io was interrupted (cannot reach the Kubernetes API server: connection refused); client-go lists and watches again by itself`,
		`engines.longhorn.io: watching again from the last resourceVersion seen`,
		`the watch on engines.longhorn.io expired (too old resource version); client-go re-lists`,
		`engines.longhorn.io re-listed after the error above; watching again`,
		`engines.longhorn.io re-listed; watching again`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
