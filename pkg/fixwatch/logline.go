package fixwatch

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// TimeFormat stamps every line: RFC 3339 in UTC with milliseconds, so that a
// person reading `kubectl logs` can order lines from different watches and
// see how long the guard waited before it acted.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// stamper writes timestamped lines to one stream. Lines written through
// Writer (fix's Printer) are stamped when they are complete; the guard's own
// lines carry the time of the event they report. Safe for concurrent use.
type stamper struct {
	mu  sync.Mutex
	w   io.Writer
	now func() time.Time
	buf bytes.Buffer // an incomplete line written through Writer
	// clear takes a live progress line off the terminal before a line.
	clear func()
}

func newStamper(w io.Writer) *stamper { return &stamper{w: w, now: time.Now} }

// Line writes the line build makes from the time it is stamped with, and
// returns that time: a state's "first seen" time is then exactly the time
// on the line that reports it, and lines stay in time order.
func (s *stamper) Line(build func(t time.Time) string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.now()
	for _, line := range strings.Split(strings.TrimRight(build(t), "\n"), "\n") {
		s.writeLocked(t, line)
	}
	return t
}

// Printf writes one line stamped now.
func (s *stamper) Printf(format string, args ...any) {
	msg := safetext.Lines(fmt.Sprintf(format, args...))
	s.Line(func(time.Time) string { return msg })
}

func (s *stamper) writeLocked(t time.Time, line string) {
	if s.clear != nil {
		s.clear()
	}
	fmt.Fprintf(s.w, "%s %s\n", t.UTC().Format(TimeFormat), line)
}

// Write implements io.Writer for code that prints whole lines (fix's
// Printer): each complete line is stamped with the time it was completed.
func (s *stamper) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Write(p)
	for {
		i := bytes.IndexByte(s.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(s.buf.Next(i + 1))
		s.writeLocked(s.now(), strings.TrimSuffix(line, "\n"))
	}
}

// Flush writes an incomplete last line, if any.
func (s *stamper) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf.Len() > 0 {
		s.writeLocked(s.now(), s.buf.String())
		s.buf.Reset()
	}
}
