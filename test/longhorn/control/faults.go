// Package control is the release-independent part of the
// longhorn-controllers test binaries: fault injection into the controllers'
// Longhorn client and the loopback control API. It uses the standard
// library only, so every release's module (each pinning its own k8s.io
// versions) can share it.
package control

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
)

// Fault answers the first Count matching requests with HTTP Code instead of
// sending them to the API server, or as its Mode says.
type Fault struct {
	ID int `json:"id"`
	// Verb is get, list, watch, create, update, patch or delete.
	Verb string `json:"verb"`
	// Resource is a plural ("engines"), with "/status" for the subresource.
	Resource string `json:"resource"`
	// Name of the object; "" matches any.
	Name string `json:"name"`
	// Count of requests to fail; 0 means 1.
	Count int `json:"count"`
	// Code is the HTTP status to answer; 0 means 500.
	Code int `json:"code"`
	// Mode: "" answers Code and never sends the request; "after" sends it
	// (the write takes effect) and then answers Code, as a timeout after
	// the server applied it does; "timeout" sends it and then fails as the
	// client's own deadline does, with no answer at all (Code unused);
	// "reset" answers with a connection reset, the request never sent.
	Mode string `json:"mode,omitempty"`
	// Hits counts the requests answered so far.
	Hits int `json:"hits"`
}

// Faults is the set of injected faults; safe for concurrent use.
type Faults struct {
	mu     sync.Mutex
	nextID int
	list   []*Fault
}

// Add registers f and returns its id.
func (fs *Faults) Add(f Fault) (int, error) {
	switch f.Verb {
	case "get", "list", "watch", "create", "update", "patch", "delete":
	default:
		return 0, fmt.Errorf("unknown verb %q", f.Verb)
	}
	if f.Resource == "" {
		return 0, fmt.Errorf("resource is required")
	}
	switch f.Mode {
	case "", "after", "timeout", "reset":
	default:
		return 0, fmt.Errorf("unknown mode %q", f.Mode)
	}
	if f.Count <= 0 {
		f.Count = 1
	}
	if f.Code == 0 {
		f.Code = http.StatusInternalServerError
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.nextID++
	f.ID = fs.nextID
	f.Hits = 0
	fs.list = append(fs.list, &f)
	return f.ID, nil
}

// List returns copies of every fault, with their hits.
func (fs *Faults) List() []Fault {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]Fault, 0, len(fs.list))
	for _, f := range fs.list {
		out = append(out, *f)
	}
	return out
}

// Clear removes every fault.
func (fs *Faults) Clear() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.list = nil
}

// match returns a copy of the first fault with hits left that matches req,
// counting the hit.
func (fs *Faults) match(req *http.Request) (Fault, bool) {
	verb, resource, name, ok := describe(req)
	if !ok {
		return Fault{}, false
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.list {
		if f.Hits >= f.Count || f.Verb != verb || f.Resource != resource || (f.Name != "" && f.Name != name) {
			continue
		}
		f.Hits++
		return *f, true
	}
	return Fault{}, false
}

// describe reads a request to the API as verb, resource (with subresource)
// and object name, as the API server's request info would.
func describe(req *http.Request) (verb, resource, name string, ok bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	// /apis/<group>/<version>/... or /api/<version>/...
	switch {
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	default:
		return "", "", "", false
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return "", "", "", false
	}
	resource = parts[0]
	if len(parts) >= 2 {
		name = parts[1]
	}
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	switch req.Method {
	case http.MethodGet:
		switch {
		case name != "":
			verb = "get"
		case req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1":
			verb = "watch"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	default:
		return "", "", "", false
	}
	return verb, resource, name, true
}

// WrapTransport is for rest.Config.WrapTransport: a request matching a fault
// is answered as the fault says (Fault.Mode): a metav1.Status body with
// the fault's code, or a connection reset.
func (fs *Faults) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return roundTripper{fs: fs, next: rt}
}

type roundTripper struct {
	fs   *Faults
	next http.RoundTripper
}

func (r roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	f, ok := r.fs.match(req)
	if !ok {
		return r.next.RoundTrip(req)
	}
	switch f.Mode {
	case "after", "timeout":
		resp, err := r.next.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if f.Mode == "timeout" {
			return nil, timeoutError{}
		}
	case "reset":
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	default:
		if req.Body != nil {
			_ = req.Body.Close()
		}
	}
	code := f.Code
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected fault","reason":%q,"code":%d}`,
		reason(code), code)
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", code, http.StatusText(code)),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          newBody(body),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

func reason(code int) string {
	switch code {
	case http.StatusNotFound:
		return "NotFound"
	case http.StatusConflict:
		return "Conflict"
	case http.StatusForbidden:
		return "Forbidden"
	case http.StatusTooManyRequests:
		return "TooManyRequests"
	case http.StatusServiceUnavailable:
		return "ServiceUnavailable"
	case http.StatusGatewayTimeout:
		return "Timeout"
	case http.StatusInternalServerError:
		return "InternalError"
	}
	return ""
}

// timeoutError is what a client's deadline gives a request: a net.Error
// that timed out (client-go hands it to the caller; it retries no write).
type timeoutError struct{}

func (timeoutError) Error() string   { return "injected fault: timeout awaiting response headers" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }
