package fixwatch

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every line carries an RFC 3339 time with milliseconds, also lines written
// in pieces through Write; times never go backwards; a line built with Line
// carries the time it returns.
func TestStamperLines(t *testing.T) {
	var buf bytes.Buffer
	s := newStamper(&buf)
	clock := t0
	s.now = func() time.Time { clock = clock.Add(1500 * time.Microsecond); return clock }

	fmt.Fprint(s, "engine.longhorn.io ")
	fmt.Fprint(s, "\"e\" deactivated\nsecond")
	at := s.Line(func(t time.Time) string { return "built at " + t.Format(TimeFormat) })
	fmt.Fprint(s, " line\n")
	s.Printf("two\nlines")
	fmt.Fprint(s, "partial")
	s.Flush()

	want := []string{
		"2026-01-02T03:04:05.001Z engine.longhorn.io \"e\" deactivated",
		"2026-01-02T03:04:05.003Z built at 2026-01-02T03:04:05.003Z",
		"2026-01-02T03:04:05.004Z second line",
		"2026-01-02T03:04:05.006Z two",
		"2026-01-02T03:04:05.006Z lines",
		"2026-01-02T03:04:05.007Z partial",
	}
	if got := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !at.Equal(t0.Add(2 * 1500 * time.Microsecond)) {
		t.Errorf("Line returned %s", at)
	}
	if strings.Contains(buf.String(), "\x1b") {
		t.Error("escape codes")
	}
}

// Lines from many goroutines are never interleaved.
func TestStamperConcurrent(t *testing.T) {
	var buf bytes.Buffer
	s := newStamper(&buf)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if j%2 == 0 {
					s.Printf("line %d %d", i, j)
				} else {
					fmt.Fprintf(s, "line %d %d\n", i, j)
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 400 {
		t.Fatalf("%d lines", len(lines))
	}
	var last time.Time
	for _, l := range lines {
		ts, rest, _ := strings.Cut(l, " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || !strings.HasPrefix(rest, "line ") || strings.Count(rest, "line") != 1 {
			t.Fatalf("bad line %q", l)
		}
		if at.Before(last) {
			t.Fatalf("time went backwards at %q", l)
		}
		last = at
	}
}
