// Package testcluster runs a real Kubernetes API server inside the test
// process, with Longhorn's CRDs installed, for tests and demos of
// kubectl-longhorn-engines.
//
// The server is k8s.io/apiextensions-apiserver (the generic API server that
// serves CRDs in every cluster) on an embedded etcd. Custom resources behave
// as on a real cluster: schema pruning, the status subresource, optimistic
// concurrency (409 Conflict), delete preconditions, finalizers and
// Terminating objects, pagination, watch, server-side dry-run and apply.
// What it lacks: core/v1 and every other built-in API, namespaces as objects
// (any namespace name is accepted), garbage collection (owner references are
// stored but never cascade), admission webhooks, and controllers (Longhorn's
// included: nothing reacts to the objects).
//
// Use:
//
//	func TestMain(m *testing.M) {
//		testcluster.Main(m, &cluster)
//	}
//
// and call cluster.Reset(ctx) at the start of each test that writes objects.
// Clients: RESTConfig (client-go), Dynamic, or KubeconfigPath for the plugin
// or kubectl (context "testcluster", no namespace set, so the plugin's own
// default namespace is exercised). Only the admin is authenticated: tests
// of permissions use internal/kubeserver's RBAC. Resources: GVR("Engine")
// etc.; always address them by the full group (pitfall: volumeattachments is
// ambiguous with storage.k8s.io on a real cluster).
//
// Set TESTCLUSTER_LOGS=1 to see the server's and etcd's logs and start-up
// timings; they are silenced otherwise.
package testcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"go.etcd.io/etcd/server/v3/embed"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
)

// DefaultNamespace is Longhorn's default namespace.
const DefaultNamespace = "longhorn-system"

// ContextName is the context (and cluster) name in the written kubeconfigs.
const ContextName = "testcluster"

// Options configure Start.
type Options struct {
	// Namespace the tests use; default DefaultNamespace. Only warm-up
	// depends on it: the server accepts every namespace.
	Namespace string
	// SkipCRDs starts without any CRD; install some with InstallCRDs.
	SkipCRDs bool
	// CRDYAML, when set, is installed instead of the embedded CRDs: a
	// multi-document YAML of CustomResourceDefinitions, such as a Longhorn
	// release's k8s/crds.yaml (see InstallCRDYAML).
	CRDYAML []byte
	// Logf receives progress and timings; nil means silent unless
	// TESTCLUSTER_LOGS=1, which logs to stderr.
	Logf func(format string, args ...any)
}

// Cluster is a running etcd plus API server. Its methods are safe for
// concurrent use.
type Cluster struct {
	namespace string
	logf      func(string, ...any)
	logs      bool
	dir       string

	etcd         *embed.Etcd
	etcdEndpoint string

	auth       *authState
	adminToken string
	caPEM      []byte
	port       int
	host       string // https://127.0.0.1:port

	httpClient *http.Client // admin, no client-go retries (see warmResources)
	crdClient  apiextensionsclient.Interface
	dyn        dynamic.Interface
	kubeconfig string

	mu            sync.Mutex // guards api, lastUninstall and yamlDefs
	api           *apiServer
	lastUninstall time.Time
	yamlDefs      map[string]*crdDef // CRD name -> CRD installed by InstallCRDYAML

	stopOnce sync.Once
}

var silenceOnce sync.Once

func logsWanted() bool { return os.Getenv("TESTCLUSTER_LOGS") == "1" }

// Start starts etcd and the API server, installs the Longhorn CRDs (unless
// opts.SkipCRDs) and returns once they answer without start-up delays.
// Stop the cluster with Stop.
func Start(ctx context.Context, opts Options) (_ *Cluster, err error) {
	c := &Cluster{namespace: opts.Namespace, logf: opts.Logf, logs: logsWanted(), auth: newAuthState()}
	if c.namespace == "" {
		c.namespace = DefaultNamespace
	}
	if c.logf == nil {
		c.logf = func(string, ...any) {}
		if c.logs {
			c.logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
		}
	}
	if !c.logs {
		// klog is process-wide; the API server and client-go log through it.
		silenceOnce.Do(func() { klog.SetLogger(logr.Discard()) })
	}
	t0 := time.Now()

	c.dir, err = os.MkdirTemp("", "testcluster-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()

	c.etcd, c.etcdEndpoint, err = startEtcd(ctx, c.dir, c.logs)
	if err != nil {
		return nil, err
	}
	c.logf("testcluster: etcd ready in %v (%s)", time.Since(t0).Round(time.Millisecond), c.etcdEndpoint)

	if c.caPEM, err = writePKI(c.dir); err != nil {
		return nil, err
	}
	c.adminToken = c.auth.token

	ln, err := listenLoopback(ctx, 0)
	if err != nil {
		return nil, err
	}
	lnOwned := true // until the API server owns it
	defer func() {
		if lnOwned {
			_ = ln.Close()
		}
	}()
	c.port = ln.Addr().(*net.TCPAddr).Port
	c.host = fmt.Sprintf("https://127.0.0.1:%d", c.port)

	cfg := c.RESTConfig()
	if c.httpClient, err = rest.HTTPClientFor(cfg); err != nil {
		return nil, err
	}
	if c.crdClient, err = apiextensionsclient.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if c.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	c.kubeconfig = filepath.Join(c.dir, "kubeconfig")
	if err := c.writeKubeconfig(c.kubeconfig, AdminUser, c.adminToken); err != nil {
		return nil, err
	}

	t1 := time.Now()
	lnOwned = false // startAPIServer closes it on failure
	api, err := c.startAPIServer(ln)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.api = api
	c.mu.Unlock()
	c.logf("testcluster: API server starting on %s", c.host)
	if err := c.waitHealthy(ctx, api); err != nil {
		return nil, err
	}
	c.logf("testcluster: API server healthy in %v (%s)", time.Since(t1).Round(time.Millisecond), c.host)

	switch {
	case opts.SkipCRDs:
	case opts.CRDYAML != nil:
		if err := c.InstallCRDYAML(ctx, opts.CRDYAML); err != nil {
			return nil, err
		}
	default:
		if err := c.InstallCRDs(ctx); err != nil {
			return nil, err
		}
	}
	c.logf("testcluster: started in %v", time.Since(t0).Round(time.Millisecond))
	return c, nil
}

// waitHealthy polls /healthz (not /readyz: readiness waits for informers of
// core resources this server does not serve, and never turns OK).
func (c *Cluster) waitHealthy(ctx context.Context, api *apiServer) error {
	if err := c.waitOK(ctx, api, "/healthz"); err != nil {
		return err
	}
	api.healthy.Store(true)
	return nil
}

// waitOK polls path until it answers 200, for at most a minute.
func (c *Cluster) waitOK(ctx context.Context, api *apiServer, path string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var code int
	var body string
	for {
		code, body = c.rawGet(ctx, path)
		if code == http.StatusOK {
			return nil
		}
		select {
		case <-api.done:
			return fmt.Errorf("testcluster: API server exited: %v", api.err)
		case <-ctx.Done():
			return fmt.Errorf("testcluster: API server not healthy (last answer %d %s): %w", code, body, ctx.Err())
		case <-tick.C:
		}
	}
}

// crdInformerHook is the API server's start-up hook that fails when the
// server stops before its CRD informer has synced; a failed start-up hook
// exits the whole process (klog.Fatalf, exit status 255).
const crdInformerHook = "/healthz/poststarthook/crd-informer-synced"

// stopAPIServer stops one run of the server. A run that never turned
// healthy (its start ran out of time) first gets its own minute to finish
// the CRD informer hook, so that the test sees the error that stopped the
// start instead of the test binary exiting with status 255.
func (c *Cluster) stopAPIServer(api *apiServer) error {
	if !api.healthy.Load() {
		_ = c.waitOK(context.Background(), api, crdInformerHook)
	}
	return api.stop()
}

// RESTConfig returns a new admin client configuration (AdminConfig).
func (c *Cluster) RESTConfig() *rest.Config { return AdminConfig(c.host, c.adminToken, c.caPEM) }

// AdminConfig is a client configuration for a test API server at host that
// trusts caPEM and authenticates with token. Client-side rate limiting is
// off: tests should not wait on it.
func AdminConfig(host, token string, caPEM []byte) *rest.Config {
	return &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), caPEM...)},
		QPS:             1000,
		Burst:           1000,
	}
}

// KubeconfigPath is the admin kubeconfig: context ContextName, no namespace.
func (c *Cluster) KubeconfigPath() string { return c.kubeconfig }

// Dynamic returns an admin dynamic client.
func (c *Cluster) Dynamic() dynamic.Interface { return c.dyn }

// Namespace is Options.Namespace or DefaultNamespace.
func (c *Cluster) Namespace() string { return c.namespace }

// Host is the server's URL, https://127.0.0.1:<port>.
func (c *Cluster) Host() string { return c.host }

// Dir is the cluster's temporary directory (kubeconfigs, certificates, etcd
// data); Stop removes it.
func (c *Cluster) Dir() string { return c.dir }

// writeKubeconfig writes a standalone kubeconfig for one user. The CA is our
// own (see writePKI), so no tls-server-name is needed and the file survives
// API server restarts.
func (c *Cluster) writeKubeconfig(path, userName, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{
		Server:                   c.host,
		CertificateAuthorityData: c.caPEM,
	}
	cfg.AuthInfos[userName] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: userName}
	cfg.CurrentContext = ContextName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

// RestartAPIServer stops the API server, cutting every open connection and
// watch, and starts a new one on the same address with the same etcd,
// certificates and tokens. Clients see what they would see when a real API
// server restarts. It returns once the new server is healthy and the CRDs
// are served without start-up delays.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	t0 := time.Now()
	c.mu.Lock()
	old := c.api
	c.api = nil
	c.mu.Unlock()
	if old != nil {
		if err := c.stopAPIServer(old); err != nil {
			return err
		}
	}
	ln, err := listenLoopback(ctx, c.port)
	if err != nil {
		return fmt.Errorf("testcluster: listen again on port %d: %w", c.port, err)
	}
	api, err := c.startAPIServer(ln)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.api = api
	c.mu.Unlock()
	if err := c.waitHealthy(ctx, api); err != nil {
		return err
	}
	crds, err := c.installedLonghornCRDs(ctx)
	if err != nil {
		return err
	}
	var defs []*crdDef
	for _, crd := range crds {
		if d, err := c.lookupInstalled(crd.Name); err == nil {
			defs = append(defs, d)
		}
	}
	c.syncDiscoveryGroup(ctx)
	if err := c.warmResources(ctx, defs); err != nil {
		return err
	}
	c.logf("testcluster: API server restarted in %v", time.Since(t0).Round(time.Millisecond))
	return nil
}

// crdTeardownDelay covers the API server's 1 s grace before it tears down
// the storage of a deleted CRD.
const crdTeardownDelay = 1500 * time.Millisecond

// Stop stops the API server and etcd and removes the temporary directory.
// It may be called more than once.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		api := c.api
		c.api = nil
		since := time.Since(c.lastUninstall)
		c.mu.Unlock()
		// The API server drops a deleted CRD's storage only a second after the
		// deletion, outside its own shutdown; etcd stopped before that makes
		// that storage's etcd client print connection errors to stderr.
		if wait := crdTeardownDelay - since; wait > 0 {
			time.Sleep(wait)
		}
		if api != nil {
			if err := c.stopAPIServer(api); err != nil {
				c.logf("testcluster: stop API server: %v", err)
			}
		}
		if c.etcd != nil {
			c.etcd.Close()
		}
		if c.httpClient != nil {
			c.httpClient.CloseIdleConnections()
		}
		if c.dir != "" {
			_ = os.RemoveAll(c.dir)
		}
	})
}

// Main is for TestMain: it starts one cluster for the test package, keeps
// it in *shared (the package's variable), runs the tests, stops the
// cluster and exits with the tests' code.
func Main(m *testing.M, shared **Cluster) {
	os.Exit(runMain(m, shared))
}

func runMain(m *testing.M, shared **Cluster) int {
	t0 := time.Now()
	c, err := Start(context.Background(), Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v\n", err)
		return 1
	}
	defer c.Stop()
	c.logf("testcluster: shared cluster up in %v", time.Since(t0).Round(time.Millisecond))
	*shared = c
	return m.Run()
}
