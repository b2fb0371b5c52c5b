package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newClock() *clock { return &clock{time.Date(2026, 12, 2, 23, 0, 0, 0, time.UTC)} }

// Not a terminal: one timestamped line per change, a heartbeat when nothing
// changes for long, never a carriage return or an escape code.
func TestPlainLines(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	r := NewPlain(&b, c.now)
	w := r.Begin(`waiting for volume "v"`, 5*time.Minute)
	w.Update("engine e-0 still active", "e-0@a(active,running) e-1@b(active,running)")
	c.t = c.t.Add(2 * time.Second)
	w.Update("engine e-0 still active", "e-0@a(active,running) e-1@b(active,running)") // unchanged: no line
	c.t = c.t.Add(2 * time.Second)
	w.Update("replicas flipping", "e-0@a(inactive,running) e-1@b(active,running)")
	c.t = c.t.Add(31 * time.Second)
	w.Update("replicas flipping", "e-0@a(inactive,running) e-1@b(active,running)") // heartbeat
	w.End()
	got := b.String()
	want := `2026-12-02T23:00:00.000Z [0s / 5m0s] waiting for volume "v": engine e-0 still active; engines: e-0@a(active,running) e-1@b(active,running)
2026-12-02T23:00:04.000Z [4s / 5m0s] waiting for volume "v": replicas flipping; engines: e-0@a(inactive,running) e-1@b(active,running)
2026-12-02T23:00:35.000Z [35s / 5m0s] waiting for volume "v": replicas flipping; engines: e-0@a(inactive,running) e-1@b(active,running)
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if strings.ContainsAny(got, "\r\x1b") {
		t.Errorf("control characters in plain output: %q", got)
	}
}

// A terminal: one line redrawn in place, never longer than the terminal,
// taken off before other output, with n/N done across volumes.
func TestLiveLine(t *testing.T) {
	var b bytes.Buffer
	c := newClock()
	r := NewLive(&b, 60, c.now, cmdutil.NewPainter(false))
	r.Total(3)
	w := r.Begin(`waiting for volume "pvc-7b120d60-1577-4716-be5a-62348271025a"`, time.Minute)
	w.Update("engine still active", "e-0@harvester-node-1(active,running)")
	c.t = c.t.Add(3 * time.Second)
	w.Update("engine still active", "e-0@harvester-node-1(active,running)")
	r.Done("pvc-7b120d60-1577-4716-be5a-62348271025a")
	r.Clear()
	w.End()
	out := b.String()
	if strings.Contains(out, "\n") {
		t.Fatalf("a live line printed a newline: %q", out)
	}
	frames := strings.Split(out, "\r\x1b[K")
	var drawn []string
	for _, f := range frames {
		if f != "" {
			drawn = append(drawn, f)
		}
	}
	if len(drawn) != 3 {
		t.Fatalf("want 3 redraws, got %d: %q", len(drawn), out)
	}
	for _, f := range drawn {
		if n := utf8.RuneCountInString(f); n > 59 {
			t.Errorf("frame of %d runes on a 60-column terminal: %q", n, f)
		}
	}
	if !strings.HasPrefix(drawn[0], "[0/3 done] [0s / 1m0s] waiting for volume") || !strings.HasPrefix(drawn[2], "[1/3 done]") {
		t.Errorf("frames do not count volumes: %q", drawn)
	}
	if !strings.Contains(drawn[1], "[3s / 1m0s]") || !strings.HasSuffix(drawn[1], "…") {
		t.Errorf("elapsed/timeout missing: %q", drawn[1])
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("the line is not cleared at the end: %q", out)
	}
}

func TestNilReporterIsQuiet(t *testing.T) {
	var r *Reporter
	w := r.Begin("x", time.Second)
	w.Update("a", "b")
	w.End()
	r.Total(2)
	r.Done("v")
	r.Clear()
}
