package progress

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// never is an interval no test waits out: a look that needs it fails the
// test by its context's deadline instead.
const never = time.Hour

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The first look is at once, not after an interval.
func TestPollLooksAtOnce(t *testing.T) {
	calls := 0
	last, err := Poll(testCtx(t), nil, never, never, func(context.Context) (Look, error) {
		calls++
		return Look{Done: true, Status: "unused"}, nil
	})
	if err != nil || calls != 1 || last != "" {
		t.Fatalf("Poll = %q, %v after %d looks; want done after one look", last, err, calls)
	}
}

// A read error is shown and the wait goes on.
func TestPollRetriesReadErrors(t *testing.T) {
	var b bytes.Buffer
	w := NewPlain(&b, time.Now).Begin("waiting for volume", never)
	calls := 0
	last, err := Poll(testCtx(t), w, time.Millisecond, never, func(context.Context) (Look, error) {
		calls++
		switch calls {
		case 1:
			return Look{Status: "engine still active", Engines: "e-0@a(active,running)"}, nil
		case 2:
			return Look{}, errors.New("connection refused")
		}
		return Look{Done: true}, nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("Poll = %v after %d looks, want done after 3", err, calls)
	}
	if last != "cannot read the volume: connection refused" {
		t.Errorf("last status %q", last)
	}
	out := b.String()
	for _, want := range []string{"waiting for volume: engine still active; engines: e-0@a(active,running)\n", "waiting for volume: cannot read the volume: connection refused\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%s", want, out)
		}
	}
}

// A look's Fail ends the wait with that error.
func TestPollFail(t *testing.T) {
	bad := errors.New("two active engines")
	if _, err := Poll(testCtx(t), nil, time.Millisecond, never, func(context.Context) (Look, error) {
		return Look{Fail: bad}, nil
	}); err != bad {
		t.Fatalf("Poll = %v, want %v", err, bad)
	}
}

// The wait's own timeout gives ErrTimedOut with the last status, after a
// last look at the deadline: a state reached just then counts.
func TestPollTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	start := time.Now()
	calls := 0
	last, err := Poll(testCtx(t), nil, time.Millisecond, timeout, func(context.Context) (Look, error) {
		calls++
		return Look{Status: "replicas flipping"}, nil
	})
	if !errors.Is(err, ErrTimedOut) || !errors.Is(err, context.DeadlineExceeded) || last != "replicas flipping" {
		t.Fatalf("Poll = %q, %v; want ErrTimedOut with the last status", last, err)
	}
	if calls < 2 {
		t.Errorf("%d looks in %s at an interval of 1ms", calls, time.Since(start))
	}

	// No tick before the deadline: the last look is the one at it.
	calls = 0
	start = time.Now()
	last, err = Poll(testCtx(t), nil, never, timeout, func(context.Context) (Look, error) {
		calls++
		if time.Since(start) < timeout {
			return Look{Status: "not yet"}, nil
		}
		return Look{Done: true}, nil
	})
	if err != nil || calls != 2 {
		t.Fatalf("Poll = %q, %v after %d looks; want done at the look at the deadline", last, err, calls)
	}
}

// Ctrl-C (the caller's context cancelled) is not a timeout, and a read cut
// short by it is not shown; a deadline of the caller's context is a
// DeadlineExceeded but not ErrTimedOut.
func TestPollContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	calls := 0
	last, err := Poll(ctx, nil, time.Millisecond, never, func(ctx context.Context) (Look, error) {
		calls++
		if calls == 1 {
			return Look{Status: "waiting"}, nil
		}
		cancel()
		return Look{}, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || last != "waiting" {
		t.Fatalf("cancelled: Poll = %q, %v; want context.Canceled with the status before", last, err)
	}

	ctx, cancelDeadline := context.WithTimeout(testCtx(t), 20*time.Millisecond)
	defer cancelDeadline()
	_, err = Poll(ctx, nil, time.Millisecond, never, func(ctx context.Context) (Look, error) {
		return Look{Status: "waiting"}, nil
	})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimedOut) {
		t.Fatalf("caller's deadline: Poll = %v; want context.DeadlineExceeded, not ErrTimedOut", err)
	}
}
