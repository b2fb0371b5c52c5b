package kubeserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// Namespace is Longhorn's namespace, created at start.
const Namespace = testcluster.DefaultNamespace

// ContextName is the context (and cluster) name in the written kubeconfigs.
const ContextName = "kubeserver"

// Server is a running kube-apiserver with its etcd.
type Server struct {
	dir        string
	host       string
	caPEM      []byte
	adminToken string
	kubeconfig string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	errOut *lockedWriter
	exited chan struct{}

	client kubernetes.Interface
	dyn    dynamic.Interface

	stopOnce sync.Once
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BuildFlags are the server's build flags, the tests' own: with -race its
// dependencies (the same k8s.io and etcd versions as this module's) are
// the packages `make vet` and the test binaries have compiled already, and
// a cold build compiles only Kubernetes' own (371 CPU-s against 1040).
// `make kube-apiserver` passes the same (checked by a test).
var BuildFlags = []string{"-race", "-ldflags=-w"}

// BinaryEnv names a server binary built elsewhere, which Binary then
// returns instead of building its own: make soak's, built without -race,
// since the race detector in the server made it most of a soak's CPU.
const BinaryEnv = "KUBESERVER_BINARY"

// Binary builds the server (test/kubeapiserver) into bin/ once per process
// and returns its path (BinaryEnv's, when set). `make kube-apiserver`
// builds the same file ahead of the tests.
func Binary() (string, error) {
	if p := os.Getenv(BinaryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("kubeserver: %s: %w", BinaryEnv, err)
		}
		return p, nil
	}
	buildOnce.Do(func() {
		out := filepath.Join(testenv.ModuleRoot(), "bin", "kube-apiserver-test")
		args := append(append([]string{"build", "-C", filepath.Join(testenv.ModuleRoot(), "test", "kubeapiserver")}, BuildFlags...), "-o", out, ".")
		cmd := exec.Command("go", args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("kubeserver: build kube-apiserver: %v\n%s", err, stderr.String())
			return
		}
		buildPath = out
	})
	return buildPath, buildErr
}

// Options change what Start installs.
type Options struct {
	// CRDYAML is a Longhorn release's own CRDs (lhreal.CRDs) to install
	// instead of the embedded ones, for Longhorn's controllers of that
	// release.
	CRDYAML []byte
}

// Start builds (if needed) and starts a server, installs Longhorn's CRDs and
// creates the longhorn-system namespace.
func Start(ctx context.Context) (*Server, error) { return StartWith(ctx, Options{}) }

// StartWith is Start with opts.
func StartWith(ctx context.Context, opts Options) (_ *Server, err error) {
	crds, err := opts.crds()
	if err != nil {
		return nil, err
	}
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	// Short: etcd's unix socket paths must fit in sun_path.
	dir, err := os.MkdirTemp("", "kas")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, adminToken: newToken(), errOut: &lockedWriter{w: &bytes.Buffer{}}, exited: make(chan struct{})}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	tokens := fmt.Sprintf("%s,admin,admin,system:masters\n", s.adminToken)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return nil, err
	}
	args := []string{"--dir", dir}
	if os.Getenv("KUBESERVER_LOGS") == "1" {
		args = append(args, "-v")
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = s.errOut
	if os.Getenv("KUBESERVER_LOGS") == "1" {
		s.cmd.Stderr = io.MultiWriter(os.Stderr, s.cmd.Stderr)
	}
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("kubeserver: start: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()

	if err := s.waitReady(ctx); err != nil {
		return nil, err
	}
	if err := s.connect(); err != nil {
		return nil, err
	}
	if err := s.EnsureNamespace(ctx, Namespace); err != nil {
		return nil, err
	}
	if err := s.installCRDs(ctx, crds); err != nil {
		return nil, err
	}
	return s, nil
}

func (o Options) crds() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	if o.CRDYAML != nil {
		return testcluster.ParseCRDYAML(o.CRDYAML)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, doc := range testcluster.CRDs() {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, fmt.Errorf("kubeserver: embedded CRD: %w", err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// waitReady polls for the ready file the server writes once /readyz is OK.
func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		select {
		case <-s.exited:
			return false, errors.New("the server exited")
		default:
		}
		b, err := os.ReadFile(filepath.Join(s.dir, "ready"))
		if err != nil {
			return false, nil
		}
		s.host = strings.TrimSpace(string(b))
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("kubeserver: not ready: %v\n%s", err, s.Stderr())
	}
	ca, err := os.ReadFile(filepath.Join(s.dir, "certs", "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("kubeserver: serving certificate: %w", err)
	}
	s.caPEM = ca
	return nil
}

func (s *Server) connect() error {
	var err error
	if s.client, err = kubernetes.NewForConfig(s.RESTConfig()); err != nil {
		return err
	}
	if s.dyn, err = dynamic.NewForConfig(s.RESTConfig()); err != nil {
		return err
	}
	s.kubeconfig = filepath.Join(s.dir, "kubeconfig")
	return s.writeKubeconfig(s.kubeconfig, "admin", s.adminToken, "")
}

// installCRDs installs Longhorn's CRDs and waits until each is Established
// and past the server's two-second start-up delay for creates.
func (s *Server) installCRDs(ctx context.Context, defs []*apiextensionsv1.CustomResourceDefinition) error {
	cs, err := apiextensionsclient.NewForConfig(s.RESTConfig())
	if err != nil {
		return err
	}
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range defs {
		if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("kubeserver: create CRD %s: %w", crd.Name, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, d := range defs {
			crd, err := crds.Get(ctx, d.Name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			est := false
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue &&
					time.Since(c.LastTransitionTime.Time) > 2*time.Second {
					est = true
				}
			}
			if !est {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("kubeserver: CRDs not established: %w", err)
	}
	return s.warm(ctx, defs)
}

// warm lists each resource the tests use until it answers 200: the first
// request to a resource is answered 429 while its watch cache builds, and
// client-go then sleeps a whole second (a raw client does not).
func (s *Server) warm(ctx context.Context, defs []*apiextensionsv1.CustomResourceDefinition) error {
	rt, err := rest.TransportFor(s.RESTConfig())
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: rt}
	paths := []string{"/api/v1/pods", "/api/v1/persistentvolumeclaims", "/api/v1/persistentvolumes", "/api/v1/configmaps",
		"/apis/storage.k8s.io/v1/volumeattachments"}
	for _, d := range defs {
		paths = append(paths, "/apis/"+longhorn.APIVersion+"/namespaces/"+Namespace+"/"+d.Spec.Names.Plural)
	}
	for _, p := range paths {
		code := 0
		err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.host+p+"?limit=1", nil)
			if err != nil {
				return false, err
			}
			resp, err := hc.Do(req)
			if err != nil {
				return false, nil
			}
			_ = resp.Body.Close()
			code = resp.StatusCode
			return code == http.StatusOK, nil
		})
		if err != nil {
			return fmt.Errorf("kubeserver: %s not served (last answer %d): %w", p, code, err)
		}
	}
	return nil
}

// RESTConfig is an admin client configuration (group system:masters), with
// client-side rate limiting off.
func (s *Server) RESTConfig() *rest.Config {
	cfg := testcluster.AdminConfig(s.host, s.adminToken, s.caPEM)
	// The server warns at every write of Longhorn's finalizer
	// "longhorn.io" (not domain-qualified), as it does to Longhorn.
	cfg.WarningHandler = rest.NoWarnings{}
	return cfg
}

// EnsureNamespace creates a namespace unless it exists: unlike
// testcluster, this server refuses objects in a namespace that is not
// there.
func (s *Server) EnsureNamespace(ctx context.Context, ns string) error {
	_, err := s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubeserver: create namespace %s: %w", ns, err)
	}
	return nil
}

// Client is an admin clientset.
func (s *Server) Client() kubernetes.Interface { return s.client }

// Dynamic is an admin dynamic client.
func (s *Server) Dynamic() dynamic.Interface { return s.dyn }

// KubeconfigPath is the admin kubeconfig: context ContextName, no namespace.
func (s *Server) KubeconfigPath() string { return s.kubeconfig }

// Host is https://127.0.0.1:<port>.
func (s *Server) Host() string { return s.host }

// Dir is the server's directory; Stop removes it.
func (s *Server) Dir() string { return s.dir }

// Stderr is what the server printed (everything with KUBESERVER_LOGS=1,
// otherwise its errors).
func (s *Server) Stderr() string {
	return s.errOut.String()
}

// ServiceAccountKubeconfig creates the service account ns/name if it does
// not exist, asks the TokenRequest API for a token of it and writes a
// kubeconfig with that token: the API server authenticates it as
// system:serviceaccount:ns:name and authorizes it by RBAC alone. Its
// namespace is ns, as a pod of the account's namespace finds in-cluster.
// The token lasts a day (a soak runs for hours; in a pod the kubelet
// renews it).
func (s *Server) ServiceAccountKubeconfig(ctx context.Context, ns, name string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := s.client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("kubeserver: create service account %s/%s: %w", ns, name, err)
	}
	ttl := int64(24 * 3600)
	tr, err := s.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &ttl}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("kubeserver: token for %s/%s: %w", ns, name, err)
	}
	path := filepath.Join(s.dir, "kubeconfig-"+ns+"-"+name)
	if err := s.writeKubeconfig(path, ns+"-"+name, tr.Status.Token, ns); err != nil {
		return "", err
	}
	return path, nil
}

func (s *Server) writeKubeconfig(path, user, token, namespace string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: s.host, CertificateAuthorityData: s.caPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user, Namespace: namespace}
	cfg.CurrentContext = ContextName
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}

// Stop stops the server (SIGTERM, then SIGKILL after 20 s) and removes its
// directory.
func (s *Server) Stop() {
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			testenv.StopProcess(s.cmd.Process, s.exited, 20*time.Second)
		}
		if s.stdin != nil {
			_ = s.stdin.Close()
		}
		_ = os.RemoveAll(s.dir)
	})
}

// Main is for TestMain: one server per test package.
func Main(m *testing.M, setup func(*Server)) {
	os.Exit(runMain(m, setup))
}

func runMain(m *testing.M, setup func(*Server)) int {
	s, err := Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubeserver: %v\n", err)
		return 1
	}
	defer s.Stop()
	if setup != nil {
		setup(s)
	}
	return m.Run()
}

func newToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// lockedWriter collects the child's stderr safely for concurrent reads.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.String()
}
