package readstate

import (
	"context"
	"errors"
	"io"
	"net/http"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// API servers restart and their load balancers drop connections during the
// very upgrades this tool is for. client-go already waits out a 429 or a
// 5xx that carries Retry-After, and a GET whose connection dropped;
// readRetry adds the transient failures it gives up on at once: a 500, 502,
// 503 or 504 without Retry-After, and a refused connection (an API server
// restarting). Only reads (GET, which includes
// lists and watches) are retried: a write that failed may have happened,
// and its caller must find out by reading, never by sending it again.
// Retries stay within the request's deadline (--request-timeout).
type readRetry struct {
	next     http.RoundTripper
	attempts int
	backoff  time.Duration
}

func withReadRetry(rt http.RoundTripper) http.RoundTripper {
	return &readRetry{next: rt, attempts: 6, backoff: 200 * time.Millisecond}
}

func (t *readRetry) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet || req.Body != nil && req.Body != http.NoBody {
		return t.next.RoundTrip(req)
	}
	// 200ms doubling to a 2s cap: five waits, at most 5s in all.
	backoff := wait.Backoff{Duration: t.backoff, Factor: 2, Cap: 2 * time.Second, Steps: t.attempts}
	for attempt := 1; ; attempt++ {
		resp, err := t.next.RoundTrip(req)
		if attempt >= t.attempts || !transient(req.Context(), resp, err) {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			_ = resp.Body.Close()
		}
		select {
		case <-req.Context().Done():
			return nil, req.Context().Err()
		case <-time.After(backoff.Step()):
		}
	}
}

func (t *readRetry) WrappedRoundTripper() http.RoundTripper { return t.next }

func transient(ctx context.Context, resp *http.Response, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if err != nil {
		// client-go itself retries a GET whose connection dropped (EOF,
		// reset, timeout); a refused connection is a restarting server.
		return errors.Is(err, syscall.ECONNREFUSED)
	}
	switch resp.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return resp.Header.Get("Retry-After") == ""
	}
	return false
}
