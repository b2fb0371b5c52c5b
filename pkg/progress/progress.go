// Package progress reports long waits on Longhorn (fix's verification,
// migrate's steps, the guard's repairs) on stderr: on a terminal one live
// line redrawn in place (elapsed / timeout, what is awaited, the volume's
// engines), otherwise plain timestamped lines, one per change. Nothing of it
// goes to stdout, which carries data.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// heartbeat repeats an unchanged plain line this often, so a log shows a
// long wait is still alive.
const heartbeat = 30 * time.Second

// TimeFormat stamps plain lines (the guard's log format: milliseconds keep order).
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Reporter is the one progress line of a command, shared by every wait and
// by the n/N count of a run over many volumes. A nil Reporter reports
// nothing; its methods are safe from parallel workers.
type Reporter struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	width func() int
	now   func() time.Time
	paint cmdutil.Painter

	shown       bool // a live line is on the screen
	total, done int
	latest      *Wait
}

// New reports to w, live when w is a terminal (and TERM is not dumb).
func New(w io.Writer, p cmdutil.Painter) *Reporter {
	live := cmdutil.TerminalWidth(w) > 0 && os.Getenv("TERM") != "dumb"
	return &Reporter{w: w, live: live, width: func() int { return cmdutil.TerminalWidth(w) }, now: time.Now, paint: p}
}

// NewPlain reports plain timestamped lines to w with the given clock.
func NewPlain(w io.Writer, now func() time.Time) *Reporter {
	return &Reporter{w: w, width: func() int { return 0 }, now: now}
}

// NewLive reports a live line of width columns to w (tests and captures).
func NewLive(w io.Writer, width int, now func() time.Time, p cmdutil.Painter) *Reporter {
	return &Reporter{w: w, live: true, width: func() int { return width }, now: now, paint: p}
}

// Live tells whether the reporter redraws one line in place.
func (r *Reporter) Live() bool { return r != nil && r.live }

// Wait is one thing being waited for.
type Wait struct {
	r       *Reporter
	what    string
	timeout time.Duration
	start   time.Time

	status, engines string
	lastLine        string
	lastAt          time.Time
}

// Begin starts waiting for what, for at most timeout (0: no limit).
func (r *Reporter) Begin(what string, timeout time.Duration) *Wait {
	if r == nil {
		return nil
	}
	return &Wait{r: r, what: what, timeout: timeout, start: r.now()}
}

// BeginAt starts a wait that began at start (a state first seen earlier).
func (r *Reporter) BeginAt(what string, timeout time.Duration, start time.Time) *Wait {
	if r == nil {
		return nil
	}
	return &Wait{r: r, what: what, timeout: timeout, start: start}
}

// Update says what is still missing and what the volume's engines are now.
func (w *Wait) Update(status, engines string) {
	if w == nil {
		return
	}
	r := w.r
	r.mu.Lock()
	defer r.mu.Unlock()
	w.status, w.engines = status, engines
	r.latest = w
	now := r.now()
	if r.live {
		r.drawLocked(now)
		return
	}
	line := w.text(false, now)
	key := w.what + "\x00" + status + "\x00" + engines
	if key == w.lastLine && now.Sub(w.lastAt) < heartbeat {
		return
	}
	w.lastLine, w.lastAt = key, now
	fmt.Fprintf(r.w, "%s %s\n", now.UTC().Format(TimeFormat), line)
}

// End stops the wait and takes its live line off the screen.
func (w *Wait) End() {
	if w == nil {
		return
	}
	r := w.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.latest == w {
		r.latest = nil
		r.clearLocked()
	}
}

// Total sets how many volumes the run will go through (fix --all).
func (r *Reporter) Total(n int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total, r.done = n, 0
}

// Done counts one volume finished and shows n/N.
func (r *Reporter) Done(volume string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.total <= 1 {
		return
	}
	r.done++
	now := r.now()
	if r.live {
		r.drawLocked(now)
		return
	}
	fmt.Fprintf(r.w, "%s %d/%d volumes done (last: %s)\n", now.UTC().Format(TimeFormat), r.done, r.total, volume)
}

// Clear takes the live line off the screen before other output; the next
// update draws it again. Callers that print to stdout or stderr while a
// wait may be shown call it first.
func (r *Reporter) Clear() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearLocked()
}

func (r *Reporter) clearLocked() {
	if r.live && r.shown {
		_, _ = io.WriteString(r.w, "\r\x1b[K")
		r.shown = false
	}
}

// drawLocked redraws the live line, cut to the terminal so it never wraps
// (a wrapped line cannot be redrawn in place).
func (r *Reporter) drawLocked(now time.Time) {
	prefix := ""
	if r.total > 1 {
		prefix = fmt.Sprintf("[%d/%d done] ", r.done, r.total)
	}
	plain, painted := prefix, prefix
	if r.latest != nil {
		plain += r.latest.text(false, now)
		painted += r.latest.text(true, now)
	}
	if plain == "" {
		return
	}
	line := painted
	// Cut the plain text: an escape code cut in half would garble the line.
	if width := r.width(); width > 1 && utf8.RuneCountInString(plain) > width-1 {
		line = string([]rune(plain)[:width-2]) + "…"
	}
	_, _ = io.WriteString(r.w, "\r\x1b[K"+line)
	r.shown = true
}

// text is "[12s / 5m0s] waiting for X: status; engines: ...".
func (w *Wait) text(live bool, now time.Time) string {
	elapsed := now.Sub(w.start).Round(time.Second)
	clock := elapsed.String()
	if w.timeout > 0 {
		clock += " / " + w.timeout.String()
	}
	// The clock first: a cut line still shows how long it has waited.
	s := fmt.Sprintf("[%s] %s", clock, w.what)
	if w.status != "" {
		s += ": " + w.status
	}
	if w.engines != "" {
		eng := "engines: " + w.engines
		if live {
			eng = w.r.paint.Faint(eng)
		}
		s += "; " + eng
	}
	return s
}
