// Package faultproxy is an HTTPS proxy for tests that sits between the
// plugin and the test API server and misbehaves on purpose: it answers
// chosen requests with server errors, throttling, timeouts, slow responses
// and dropped connections, before or after the request reached the server.
// It records every request, so a test can count what the plugin sent (a
// write repeated blindly shows up as two).
package faultproxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Fault is what the proxy does instead of, or after, forwarding.
type Fault string

const (
	// Status500, Status503, Status409 and Status429 answer with that
	// status without forwarding. 503 and 429 carry Retry-After when the
	// rule sets it.
	Status500 Fault = "500"
	Status503 Fault = "503"
	Status409 Fault = "409"
	Status429 Fault = "429"
	// Status410 answers 410 Gone (reason Expired), as an API server does
	// to a list or watch whose resourceVersion is too old.
	Status410 Fault = "410"
	// Timeout holds the request, unforwarded, until the client gives up
	// (or Delay passes), then drops the connection.
	Timeout Fault = "timeout"
	// TimeoutAfter forwards the request, then holds the answer until the
	// client gives up: the write happened, the client cannot know.
	TimeoutAfter Fault = "timeout-after"
	// Slow waits Delay, then forwards.
	Slow Fault = "slow"
	// ResetBefore drops the connection without forwarding.
	ResetBefore Fault = "reset-before"
	// ResetAfter forwards the request, reads the server's answer, then
	// drops the connection: the write happened, the client never heard.
	ResetAfter Fault = "reset-after"
	// Respond answers 200 with the rule's Body (JSON) without forwarding:
	// it serves objects the API server does not have (the test API server
	// serves no pods).
	Respond Fault = "respond"
)

// Rule matches requests and says what to do with them. Empty fields match
// anything.
type Rule struct {
	// Verb is the Kubernetes verb: get, list, watch, create, update,
	// patch, delete.
	Verb     string
	Resource string // plural, e.g. "engines"
	Name     string
	// First applies the fault to the first First matches only (0: all).
	First int
	// Every applies it to every Every-th match (1st, Every+1th, ...);
	// 0 or 1: each. With First, counts only within the first First.
	Every int
	Fault Fault
	// RetryAfter is the Retry-After header of 429 and 503, in seconds (0:
	// none).
	RetryAfter int
	// Delay is Slow's wait and Timeout's longest hold.
	Delay time.Duration
	// Body is Respond's answer.
	Body []byte

	matched int
}

// Request is one request the proxy saw.
type Request struct {
	Time     time.Time
	Method   string
	Verb     string
	Resource string
	Name     string
	// Fault is what the proxy did ("" when it only forwarded).
	Fault Fault
	// Forwarded: the request reached the API server.
	Forwarded bool
	// Status is the server's status when forwarded, or the injected one.
	Status int
}

// Proxy is a running fault proxy.
type Proxy struct {
	srv      *httptest.Server
	upstream http.RoundTripper
	target   *url.URL
	token    string
	rp       *httputil.ReverseProxy

	mu    sync.Mutex
	rules []*Rule
	log   []Request
	// logged is closed, and replaced, whenever a request is logged.
	logged chan struct{}
	// busy counts requests other than watches still being handled: a
	// request is logged after its answer went out, so a client can be done
	// before the log shows what it did.
	busy atomic.Int64
}

// Start proxies to the API server of cfg (an admin config), listening on
// 127.0.0.1 only.
func Start(cfg *rest.Config) (*Proxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, err
	}
	up := rest.CopyConfig(cfg)
	up.BearerToken = "" // the client's own credentials are passed on
	upstream, err := rest.TransportFor(up)
	if err != nil {
		return nil, err
	}
	p := &Proxy{upstream: upstream, target: target, token: cfg.BearerToken}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		Transport:     upstream,
		FlushInterval: -1, // watches stream
	}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	p.srv.StartTLS()
	return p, nil
}

// URL is the proxy's https://127.0.0.1:<port>.
func (p *Proxy) URL() string { return p.srv.URL }

// Close stops the proxy and drops its connections.
func (p *Proxy) Close() {
	p.srv.CloseClientConnections()
	p.srv.Close()
}

// Add adds rules; the first matching rule that still applies wins.
func (p *Proxy) Add(rules ...Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range rules {
		r := rules[i]
		p.rules = append(p.rules, &r)
	}
}

// Clear removes every rule (the log stays).
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// Requests returns a copy of the log, once the requests being handled (not
// watches) are logged too, or after 5s.
func (p *Proxy) Requests() []Request {
	for deadline := time.Now().Add(5 * time.Second); p.busy.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond) // polling the handlers, not timing a client
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.log...)
}

// ResetLog empties the log.
func (p *Proxy) ResetLog() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = nil
}

// Count counts logged requests matching verb, resource and name ("" any)
// that reached the API server.
func (p *Proxy) Count(verb, resource, name string) int {
	n := 0
	for _, r := range p.Requests() {
		if r.Forwarded && match(verb, r.Verb) && match(resource, r.Resource) && match(name, r.Name) {
			n++
		}
	}
	return n
}

// AwaitFault waits until a rule has acted on a request matching verb,
// resource and name ("" any), woken by each logged request. Timeout and
// TimeoutAfter log theirs while they hold it, so a test can act while the
// client still waits for its answer.
func (p *Proxy) AwaitFault(ctx context.Context, verb, resource, name string) error {
	for {
		p.mu.Lock()
		for _, r := range p.log {
			if r.Fault != "" && match(verb, r.Verb) && match(resource, r.Resource) && match(name, r.Name) {
				p.mu.Unlock()
				return nil
			}
		}
		if p.logged == nil {
			p.logged = make(chan struct{})
		}
		ch := p.logged
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return fmt.Errorf("faultproxy: no fault on %s %s %s: %w", verb, resource, name, ctx.Err())
		case <-ch:
		}
	}
}

// Kubeconfig writes a kubeconfig that reaches the API server through the
// proxy, with the admin token, and returns its path.
func (p *Proxy) Kubeconfig(dir string) (string, error) {
	ca := p.srv.Certificate()
	var caPEM bytes.Buffer
	if err := pemEncode(&caPEM, ca.Raw); err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["faultproxy"] = &clientcmdapi.Cluster{Server: p.srv.URL, CertificateAuthorityData: caPEM.Bytes()}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: p.token}
	cfg.Contexts["faultproxy"] = &clientcmdapi.Context{Cluster: "faultproxy", AuthInfo: "admin"}
	cfg.CurrentContext = "faultproxy"
	path := filepath.Join(dir, "faultproxy.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, os.Chmod(path, 0o600)
}

func match(want, got string) bool { return want == "" || want == got }

// pick finds the rule for a request and counts the match.
func (p *Proxy) pick(req *Request) *Rule {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		if !match(r.Verb, req.Verb) || !match(r.Resource, req.Resource) || !match(r.Name, req.Name) {
			continue
		}
		if r.First > 0 && r.matched >= r.First {
			continue
		}
		r.matched++
		if r.Every > 1 && (r.matched-1)%r.Every != 0 {
			return nil
		}
		c := *r
		return &c
	}
	return nil
}

func (p *Proxy) record(req Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, req)
	if p.logged != nil {
		close(p.logged)
		p.logged = nil
	}
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	req := describe(r)
	if req.Verb != "watch" {
		p.busy.Add(1)
		defer p.busy.Add(-1)
	}
	rule := p.pick(&req)
	if rule == nil {
		sw := &statusWriter{ResponseWriter: w}
		p.rp.ServeHTTP(sw, r)
		req.Forwarded, req.Status = true, sw.code()
		p.record(req)
		return
	}
	req.Fault = rule.Fault
	switch rule.Fault {
	case Status500, Status503, Status409, Status429, Status410:
		code, _ := strconv.Atoi(string(rule.Fault))
		req.Status = code
		p.record(req)
		if rule.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(rule.RetryAfter))
		}
		writeStatus(w, code, req)
	case Slow:
		select {
		case <-time.After(rule.Delay):
		case <-r.Context().Done():
			req.Status = -1
			p.record(req)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		p.rp.ServeHTTP(sw, r)
		req.Forwarded, req.Status = true, sw.code()
		p.record(req)
	case Respond:
		req.Status = http.StatusOK
		p.record(req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(rule.Body)
	case Timeout:
		p.record(req)
		hold(r.Context(), rule.Delay)
		drop(w)
	case ResetBefore:
		p.record(req)
		drop(w)
	case ResetAfter, TimeoutAfter:
		code, err := p.forwardAndDiscard(r)
		req.Forwarded, req.Status = err == nil, code
		p.record(req)
		if rule.Fault == TimeoutAfter {
			hold(r.Context(), rule.Delay)
		}
		drop(w)
	default:
		p.record(req)
		http.Error(w, "faultproxy: unknown fault "+string(rule.Fault), http.StatusInternalServerError)
	}
}

// forwardAndDiscard sends the request to the API server and reads its whole
// answer, which the client will never get.
func (p *Proxy) forwardAndDiscard(r *http.Request) (int, error) {
	out := r.Clone(context.Background())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host, out.Host = p.target.Scheme, p.target.Host, p.target.Host
	resp, err := p.upstream.RoundTrip(out)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func hold(ctx context.Context, max time.Duration) {
	if max <= 0 {
		max = time.Minute
	}
	select {
	case <-ctx.Done():
	case <-time.After(max):
	}
}

// drop closes the client's connection with a TCP reset, mid-request.
func drop(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("faultproxy: connection cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := underlyingTCP(conn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

func underlyingTCP(c net.Conn) (*net.TCPConn, bool) {
	type netConner interface{ NetConn() net.Conn }
	for {
		switch v := c.(type) {
		case *net.TCPConn:
			return v, true
		case netConner:
			c = v.NetConn()
		default:
			return nil, false
		}
	}
}

// writeStatus answers with a Kubernetes Status object, as the API server
// does, so clients classify the error as they would a real one.
func writeStatus(w http.ResponseWriter, code int, req Request) {
	reason := map[int]string{500: "InternalError", 503: "ServiceUnavailable", 409: "Conflict", 429: "TooManyRequests", 410: "Expired"}[code]
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"faultproxy: injected %d for %s %s %s","reason":%q,"details":{"name":%q,"kind":%q},"code":%d}`,
		code, req.Verb, req.Resource, req.Name, reason, req.Name, req.Resource, code)
}

// describe reads the verb, resource and name from an API path:
// /api/v1/..., /apis/<group>/<version>/[namespaces/<ns>/]<resource>[/<name>[/<sub>]].
func describe(r *http.Request) Request {
	req := Request{Time: time.Now(), Method: r.Method}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		parts = nil
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) > 2 {
		parts = parts[2:]
	}
	if len(parts) > 0 {
		req.Resource = parts[0]
	}
	if len(parts) > 1 {
		req.Name = parts[1]
	}
	switch r.Method {
	case http.MethodGet:
		switch {
		case r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1":
			req.Verb = "watch"
		case req.Name == "":
			req.Verb = "list"
		default:
			req.Verb = "get"
		}
	case http.MethodPost:
		req.Verb = "create"
	case http.MethodPut:
		req.Verb = "update"
	case http.MethodPatch:
		req.Verb = "patch"
	case http.MethodDelete:
		req.Verb = "delete"
	default:
		req.Verb = strings.ToLower(r.Method)
	}
	return req
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWriter) code() int { return s.status }
