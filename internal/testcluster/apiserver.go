package testcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	extensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/client-go/util/cert"
	basecompatibility "k8s.io/component-base/compatibility"
	logsapi "k8s.io/component-base/logs/api/v1"
)

func init() {
	// Each server start applies logging configuration; with more than one
	// server per process (or a restart) the second apply must not fail.
	logsapi.ReapplyHandling = logsapi.ReapplyHandlingIgnoreUnchanged
}

// apiServer is one run of the API server; RestartAPIServer replaces it.
type apiServer struct {
	server *extensionsapiserver.CustomResourceDefinitions
	ln     *trackingListener
	cancel context.CancelFunc
	done   chan struct{} // closed when the server has stopped
	err    error         // RunWithContext's result, valid after done
	// healthy is set once /healthz answered OK: every start-up hook has
	// finished.
	healthy atomic.Bool
}

// configMu serialises building server configurations: options construction
// registers into process-wide registries on first use.
var configMu sync.Mutex

func (c *Cluster) startAPIServer(ln net.Listener) (*apiServer, error) {
	tl := &trackingListener{Listener: ln, conns: map[*trackedConn]struct{}{}}
	server, err := c.newAPIServer(tl)
	if err != nil {
		_ = tl.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &apiServer{server: server, ln: tl, cancel: cancel, done: make(chan struct{})}
	prepared := server.GenericAPIServer.PrepareRun()
	go func() {
		defer close(s.done)
		s.err = prepared.RunWithContext(ctx)
	}()
	return s, nil
}

func (c *Cluster) newAPIServer(ln net.Listener) (*extensionsapiserver.CustomResourceDefinitions, error) {
	configMu.Lock()
	defer configMu.Unlock()

	o := options.NewCustomResourceDefinitionsServerOptions(io.Discard, io.Discard)

	// A registry and feature gate of our own, not the process-wide defaults,
	// so two servers (or a restarted one) in one process do not collide.
	featureGate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	effectiveVersion := compatibility.DefaultBuildEffectiveVersion()
	registry := basecompatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(basecompatibility.DefaultKubeComponent, effectiveVersion, featureGate); err != nil {
		return nil, err
	}
	if err := registry.Set(); err != nil {
		return nil, err
	}
	o.ServerRunOptions.ComponentGlobalsRegistry = registry
	o.RecommendedOptions.FeatureGate = featureGate

	ss := o.RecommendedOptions.SecureServing
	ss.Listener = ln
	ss.BindAddress = net.IPv4(127, 0, 0, 1)
	ss.BindPort = ln.Addr().(*net.TCPAddr).Port
	ss.ExternalAddress = ss.BindAddress
	ss.ServerCert.CertKey.CertFile = filepath.Join(c.dir, "pki", "serving.crt")
	ss.ServerCert.CertKey.KeyFile = filepath.Join(c.dir, "pki", "serving.key")

	o.RecommendedOptions.Etcd.StorageConfig.Transport.ServerList = []string{c.etcdEndpoint}

	// The "core API" informers and clients point at this server itself:
	// there is no other. It serves no core resources, so those informers
	// never sync (why /readyz never turns OK); only admission plugins and
	// conversion webhooks would use them.
	o.RecommendedOptions.CoreAPI.CoreAPIKubeconfigPath = c.kubeconfig

	// Authentication and authorization are ours (authState), set below; the
	// delegating defaults would need a kube-apiserver to delegate to.
	o.RecommendedOptions.Authentication = nil
	o.RecommendedOptions.Authorization = nil
	// Priority and fairness reads its configuration from flowcontrol objects
	// this server does not serve.
	o.RecommendedOptions.Features.EnablePriorityAndFairness = false
	// No admission plugin can work here: NamespaceLifecycle would reject every
	// write (there are no Namespace objects) and webhooks and admission
	// policies are configured through admissionregistration objects this
	// server does not serve.
	o.RecommendedOptions.Admission.DisablePlugins = o.RecommendedOptions.Admission.RecommendedPluginOrder

	if err := o.Complete(); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	cfg, err := o.Config()
	if err != nil {
		return nil, err
	}
	cfg.GenericConfig.Authentication.Authenticator = bearertoken.New(c.auth)
	cfg.GenericConfig.Authorization.Authorizer = c.auth
	// OpenAPI v2 as well as v3, for older kubectl (explain, validation).
	getDefs := openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	cfg.GenericConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(getDefs, openapinamer.NewDefinitionNamer(extensionsapiserver.Scheme))

	completed := cfg.Complete()
	// Complete switches discovery off because a full cluster's aggregator
	// serves it; alone, /apis would be 404.
	completed.GenericConfig.EnableDiscovery = true
	return completed.New(genericapiserver.NewEmptyDelegate())
}

// stop stops this run of the server. It closes every connection the server
// accepted first: open watches would otherwise hold the HTTP server's
// graceful shutdown for its whole timeout, and a client of a restarted
// server should see its connections drop anyway.
func (s *apiServer) stop() error {
	s.cancel()
	s.ln.closeConns()
	// Clients reconnect at once (informers re-watch); a watch accepted
	// before the server stops listening would hold its graceful shutdown
	// for a minute, so keep cutting connections until it is done.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(time.Minute)
wait:
	for {
		select {
		case <-s.done:
			break wait
		case <-tick.C:
			s.ln.closeConns()
		case <-timeout:
			return errors.New("testcluster: API server did not stop within a minute")
		}
	}
	// Connections accepted while shutting down.
	s.ln.closeConns()
	if s.err != nil && !errors.Is(s.err, context.Canceled) {
		return s.err
	}
	return nil
}

// trackingListener remembers the connections it accepted so stop can cut
// them.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

type trackedConn struct {
	net.Conn
	l    *trackingListener
	once sync.Once
}

func (l *trackingListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: conn, l: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

func (l *trackingListener) closeConns() {
	l.mu.Lock()
	conns := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// listenLoopback opens 127.0.0.1:port (0 = any free port). A restart reuses
// the old port, which the stopped server has just released.
func listenLoopback(ctx context.Context, port int) (net.Listener, error) {
	addr := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	var lc net.ListenConfig
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err == nil || port == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return ln, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// writePKI creates a serving certificate for 127.0.0.1/localhost, signed by
// a CA of its own, in dir/pki (client-go's GenerateSelfSignedCertKey). They
// are files, not the server's in-memory loopback certificate, so the
// kubeconfig stays valid across API server restarts. The serving file holds
// the certificate and its CA, which is what clients are told to trust.
func writePKI(dir string) (caPEM []byte, err error) {
	pkiDir := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, []string{"localhost"})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(pkiDir, "serving.crt"), certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(pkiDir, "serving.key"), keyPEM, 0o600); err != nil {
		return nil, err
	}
	return certPEM, nil
}
