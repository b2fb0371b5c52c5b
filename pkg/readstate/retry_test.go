package readstate

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// failing answers its first fails requests with code (or a refused
// connection when code is 0), then 200.
type failing struct {
	fails, code, calls int
}

func (f *failing) RoundTrip(*http.Request) (*http.Response, error) {
	f.calls++
	if f.calls <= f.fails {
		if f.code == 0 {
			return nil, syscall.ECONNREFUSED
		}
		return &http.Response{StatusCode: f.code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("busy"))}, nil
	}
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}, nil
}

func TestReadRetry(t *testing.T) {
	for _, tc := range []struct {
		name              string
		method            string
		fails, code       int
		wantCalls, wantSC int
	}{
		{"a GET through four 503s", http.MethodGet, 4, http.StatusServiceUnavailable, 5, http.StatusOK},
		{"a GET through refused connections", http.MethodGet, 2, 0, 3, http.StatusOK},
		{"a GET gives up after six tries", http.MethodGet, 10, http.StatusBadGateway, 6, http.StatusBadGateway},
		{"a 404 is an answer", http.MethodGet, 1, http.StatusNotFound, 1, http.StatusNotFound},
		{"a write is never sent again", http.MethodPatch, 1, http.StatusServiceUnavailable, 1, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &failing{fails: tc.fails, code: tc.code}
			rt := &readRetry{next: f, attempts: 6, backoff: time.Millisecond}
			req, _ := http.NewRequest(tc.method, "http://127.0.0.1/apis", nil)
			resp, err := rt.RoundTrip(req)
			if f.calls != tc.wantCalls {
				t.Errorf("%d requests sent, want %d", f.calls, tc.wantCalls)
			}
			if err != nil {
				t.Fatalf("RoundTrip: %v", err)
			}
			defer func() { _ = resp.Body.Close() }()
			if resp.StatusCode != tc.wantSC {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantSC)
			}
		})
	}
}
