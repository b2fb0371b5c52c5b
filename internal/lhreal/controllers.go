package lhreal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// Options configure Start.
type Options struct {
	// Release is a Longhorn release with a module, e.g. "v1.4.3".
	Release string
	// Kubeconfig of the API server (testcluster.Cluster.KubeconfigPath).
	Kubeconfig string
	// Namespace of the Longhorn objects.
	Namespace string
	// Nodes: one controller runs per node, controllerID = node.
	Nodes []string
	// LogWriter, if set, also receives the controllers' stderr (Longhorn's
	// logrus logs), e.g. a testing.T log adapter.
	LogWriter io.Writer
}

// Fault makes the controllers' Longhorn client answer the first Count
// requests matching Verb, Resource and Name with HTTP Code, without sending
// them to the API server, or as Mode says.
type Fault struct {
	// Verb: get, list, watch, create, update, patch or delete.
	Verb string `json:"verb"`
	// Resource: a plural, "engines/status" for the subresource.
	Resource string `json:"resource"`
	// Name of the object; "" matches any.
	Name string `json:"name,omitempty"`
	// Count of requests to fail; 0 means 1.
	Count int `json:"count,omitempty"`
	// Code to answer; 0 means 500.
	Code int `json:"code,omitempty"`
	// Mode: "" (the request is not sent), "after" (sent, so the write
	// takes effect, then answered with Code: a timeout after the server
	// applied it), "timeout" (sent, then the client's deadline: an error,
	// no answer) or "reset" (a connection reset, not sent).
	Mode string `json:"mode,omitempty"`
}

// Controllers is one running longhorn-controllers binary.
type Controllers struct {
	cmd     *exec.Cmd
	control string // http://127.0.0.1:PORT
	http    *http.Client
	exited  chan struct{}
	waitErr error

	mu      sync.Mutex
	logs    bytes.Buffer
	changed chan struct{} // closed and replaced on every log write
	extra   io.Writer
}

// Start builds (once) and starts the release's controllers, and returns once
// the binary printed READY: informers synced, controllers running. Stop it
// with Stop.
func Start(ctx context.Context, opts Options) (*Controllers, error) {
	bin, err := Binary(opts.Release)
	if err != nil {
		return nil, err
	}
	if opts.Kubeconfig == "" || len(opts.Nodes) == 0 {
		return nil, errors.New("lhreal: Kubeconfig and Nodes are required")
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "longhorn-system"
	}
	c := &Controllers{
		http:    &http.Client{Timeout: 10 * time.Second},
		exited:  make(chan struct{}),
		changed: make(chan struct{}),
		extra:   opts.LogWriter,
	}
	c.cmd = exec.Command(bin, "--kubeconfig", opts.Kubeconfig, "--namespace", ns,
		"--nodes", strings.Join(opts.Nodes, ","), "--control-addr", "127.0.0.1:0")
	c.cmd.Stderr = logSink{c}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "READY control="); ok {
				ready <- u
			}
		}
	}()
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()
	select {
	case u := <-ready:
		c.control = u
		return c, nil
	case <-c.exited:
		return nil, fmt.Errorf("lhreal: controllers %s exited before READY (%v):\n%s", opts.Release, c.waitErr, tail(c.Logs(), 4000))
	case <-ctx.Done():
		c.Stop()
		return nil, fmt.Errorf("lhreal: controllers %s not READY: %w\n%s", opts.Release, ctx.Err(), tail(c.Logs(), 4000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

type logSink struct{ c *Controllers }

func (s logSink) Write(p []byte) (int, error) {
	s.c.mu.Lock()
	s.c.logs.Write(p)
	close(s.c.changed)
	s.c.changed = make(chan struct{})
	w := s.c.extra
	s.c.mu.Unlock()
	if w != nil {
		_, _ = w.Write(p)
	}
	return len(p), nil
}

// Stop sends SIGTERM and waits for the binary to exit (killing it after 10
// s). It may be called more than once.
func (c *Controllers) Stop() {
	select {
	case <-c.exited:
		return
	default:
	}
	testenv.StopProcess(c.cmd.Process, c.exited, 10*time.Second)
}

// Logs returns everything the controllers logged so far.
func (c *Controllers) Logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs.String()
}

// WaitLog waits until the logs contain substring, or ctx ends, or the
// binary exits.
func (c *Controllers) WaitLog(ctx context.Context, substring string) error {
	for {
		c.mu.Lock()
		found := strings.Contains(c.logs.String(), substring)
		changed := c.changed
		c.mu.Unlock()
		if found {
			return nil
		}
		select {
		case <-changed:
		case <-c.exited:
			if strings.Contains(c.Logs(), substring) {
				return nil
			}
			return fmt.Errorf("lhreal: controllers exited (%v) before logging %q", c.waitErr, substring)
		case <-ctx.Done():
			return fmt.Errorf("lhreal: %q not logged: %w", substring, ctx.Err())
		}
	}
}

// InjectFault registers f and returns its id.
func (c *Controllers) InjectFault(f Fault) (int, error) {
	body, err := json.Marshal(f)
	if err != nil {
		return 0, err
	}
	var out struct {
		ID int `json:"id"`
	}
	if err := c.do(http.MethodPost, "/faults", body, &out); err != nil {
		return 0, err
	}
	return out.ID, nil
}

// ClearFaults removes every fault.
func (c *Controllers) ClearFaults() error {
	return c.do(http.MethodDelete, "/faults", nil, nil)
}

// FaultHit is an injected fault with its id and the requests it answered.
type FaultHit struct {
	Fault
	ID   int `json:"id"`
	Hits int `json:"hits"`
}

// Faults lists every injected fault with its hits.
func (c *Controllers) Faults() ([]FaultHit, error) {
	var list []FaultHit
	if err := c.do(http.MethodGet, "/faults", nil, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// FaultHits is how many requests fault id has answered; -1 if there is no
// such fault or the binary does not answer.
func (c *Controllers) FaultHits(id int) int {
	list, err := c.Faults()
	if err != nil {
		return -1
	}
	for _, f := range list {
		if f.ID == id {
			return f.Hits
		}
	}
	return -1
}

// SetKubeNodeReady flips the Ready condition of the binary's fake core/v1
// Node (see the package comment for what that does and does not change).
func (c *Controllers) SetKubeNodeReady(node string, ready bool) error {
	return c.do(http.MethodPost, fmt.Sprintf("/nodes/%s?ready=%t", node, ready), nil, nil)
}

func (c *Controllers) do(method, path string, body []byte, out any) error {
	req, err := http.NewRequest(method, c.control+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("lhreal: control %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("lhreal: control %s %s: %d %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}
