package control

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestFaultModes: a fault without a mode answers its code and never sends
// the request; "after" sends it, so the write takes effect, and still
// answers the code; "timeout" sends it and fails as a client deadline does
// (a net.Error that timed out); "reset" answers a connection reset and
// sends nothing;
// each fault stops after Count hits.
func TestFaultModes(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		_, _ = io.WriteString(w, "{}")
	}))
	defer srv.Close()
	url := srv.URL + "/apis/longhorn.io/v1beta2/namespaces/ns/engines/e1"

	for _, tc := range []struct {
		mode      string
		code      int
		sent      int32
		wantReset bool
		timeout   bool
	}{
		{mode: "", code: http.StatusConflict, sent: 0},
		{mode: "after", code: http.StatusGatewayTimeout, sent: 1},
		{mode: "timeout", sent: 1, timeout: true},
		{mode: "reset", sent: 0, wantReset: true},
	} {
		t.Run("mode="+tc.mode, func(t *testing.T) {
			var fs Faults
			if _, err := fs.Add(Fault{Verb: "update", Resource: "engines", Name: "e1", Code: tc.code, Mode: tc.mode}); err != nil {
				t.Fatal(err)
			}
			client := &http.Client{Transport: fs.WrapTransport(http.DefaultTransport)}
			served.Store(0)
			req, _ := http.NewRequest(http.MethodPut, url, strings.NewReader("{}"))
			resp, err := client.Do(req)
			switch {
			case tc.wantReset:
				if !errors.Is(err, syscall.ECONNRESET) {
					t.Fatalf("got %v, want a connection reset", err)
				}
			case tc.timeout:
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					t.Fatalf("got %v, want a net.Error that timed out", err)
				}
			case err != nil:
				t.Fatal(err)
			default:
				_ = resp.Body.Close()
				if resp.StatusCode != tc.code {
					t.Errorf("status %d, want %d", resp.StatusCode, tc.code)
				}
			}
			if got := served.Load(); got != tc.sent {
				t.Errorf("the server saw %d requests, want %d", got, tc.sent)
			}
			// Count defaults to 1: the next request goes through.
			req, _ = http.NewRequest(http.MethodPut, url, strings.NewReader("{}"))
			resp, err = client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK || served.Load() != tc.sent+1 {
				t.Errorf("second request: status %d, server saw %d", resp.StatusCode, served.Load())
			}
		})
	}
	var fs Faults
	if _, err := fs.Add(Fault{Verb: "update", Resource: "engines", Mode: "later"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
}
