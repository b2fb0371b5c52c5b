package fixwatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsServer serves the guard's registry on /metrics (and /healthz) at
// --metrics-bind-address.
type metricsServer struct {
	srv  *http.Server
	addr string
	done chan struct{}
}

// serveMetrics listens on addr (host:port; port 0 picks a free one) and
// serves m until stop. A listen error is returned at once: the guard does
// not start without the metrics it was asked for.
func serveMetrics(addr string, m *metrics) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-bind-address %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	s := &metricsServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, addr: ln.Addr().String(), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener is ours: it fails only when closed
		}
	}()
	return s, nil
}

// stop closes the server; a scrape in progress gets a few seconds.
func (s *metricsServer) stop() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}
