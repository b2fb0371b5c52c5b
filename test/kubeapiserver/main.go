// Command kube-apiserver-test runs Kubernetes' own kube-apiserver for the
// plugin's tests, so that they have what the apiextensions-only server of
// internal/testcluster lacks: core/v1 (Nodes, Pods, PVs, PVCs, Events),
// storage.k8s.io, batch, real RBAC and admission.
//
// It lives in its own module because k8s.io/kubernetes needs a replace line
// per staging module, which must not reach the product's go.mod, and it is
// linked once here rather than into every test binary.
//
// The test harness (internal/kubeserver) starts it with a fresh directory,
// writes the static token file first, and waits for the "ready" file, which
// holds the https address. etcd is embedded, on unix sockets in the directory;
// the server listens on 127.0.0.1 only. It stops on SIGTERM, or when its
// standard input closes, so a killed test never leaves it behind.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"
)

func main() {
	dir := flag.String("dir", "", "work directory: etcd data, certificates, tokens.csv in, ready out")
	verbose := flag.Bool("v", false, "log the server and etcd")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "error: --dir is required")
		os.Exit(2)
	}
	if err := run(*dir, *verbose, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(dir string, verbose bool, extra []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// A parent that dies closes our stdin: stop with it.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	if !verbose {
		klog.SetOutput(io.Discard)
		klog.LogToStderr(false)
	}

	etcdURL, closeEtcd, err := startEtcd(dir, verbose)
	if err != nil {
		return err
	}
	defer closeEtcd()

	keyFile := filepath.Join(dir, "sa.key")
	if err := writeSigningKey(keyFile); err != nil {
		return err
	}

	s := options.NewServerRunOptions()
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	for _, f := range s.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.SecureServing.Listener = ln
	s.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	s.SecureServing.ExternalAddress = net.ParseIP("127.0.0.1")
	s.SecureServing.ServerCert.CertDirectory = filepath.Join(dir, "certs")
	s.Etcd.StorageConfig.Transport.ServerList = []string{etcdURL}
	s.ServiceClusterIPRanges = "10.0.0.0/16"
	s.EndpointReconcilerType = "none"
	s.ServiceAccountSigningKeyFile = keyFile
	s.Authentication.ServiceAccounts.Issuers = []string{"https://kubernetes.default.svc"}
	s.Authentication.ServiceAccounts.KeyFiles = []string{keyFile}

	args := []string{
		"--bind-address=127.0.0.1",
		"--authorization-mode=RBAC",
		"--token-auth-file=" + filepath.Join(dir, "tokens.csv"),
		// No controller-manager creates the default service accounts.
		"--disable-admission-plugins=ServiceAccount",
		"--anonymous-auth=false",
	}
	if err := fs.Parse(append(args, extra...)); err != nil {
		return err
	}

	completed, err := s.Complete(ctx)
	if err != nil {
		return fmt.Errorf("complete options: %w", err)
	}
	if errs := completed.Validate(); len(errs) != 0 {
		return fmt.Errorf("validate options: %w", utilerrors.NewAggregate(errs))
	}
	cfg, err := app.NewConfig(completed)
	if err != nil {
		return err
	}
	cc, err := cfg.Complete()
	if err != nil {
		return err
	}
	server, err := app.CreateServerChain(cc)
	if err != nil {
		return fmt.Errorf("create server chain: %w", err)
	}
	prepared, err := server.PrepareRun()
	if err != nil {
		return err
	}
	errCh := make(chan error, 1)
	go func() { errCh <- prepared.Run(ctx) }()

	client, err := kubernetes.NewForConfig(server.GenericAPIServer.LoopbackClientConfig)
	if err != nil {
		return err
	}
	if err := waitReady(ctx, client, errCh); err != nil {
		return err
	}
	ready := fmt.Sprintf("https://127.0.0.1:%d\n", s.SecureServing.BindPort)
	if err := os.WriteFile(filepath.Join(dir, "ready.tmp"), []byte(ready), 0o600); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, "ready.tmp"), filepath.Join(dir, "ready")); err != nil {
		return err
	}
	select {
	case err := <-errCh:
		return err
	case <-ctx.Done():
		select {
		case err := <-errCh:
			return err
		case <-time.After(20 * time.Second):
			return nil
		}
	}
}

// waitReady waits for /readyz (the full server has informers behind every
// check) and for the default namespace, which the server creates itself.
func waitReady(ctx context.Context, client kubernetes.Interface, errCh <-chan error) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-errCh:
			return fmt.Errorf("server stopped: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		status := 0
		client.CoreV1().RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&status)
		if status == 200 {
			if _, err := client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after 2m (last /readyz status %d)", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func writeSigningKey(path string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// startEtcd runs a single-member etcd on unix sockets in dir.
func startEtcd(dir string, verbose bool) (string, func(), error) {
	client := url.URL{Scheme: "unix", Path: filepath.Join(dir, "etcd-client.sock")}
	peer := url.URL{Scheme: "unix", Path: filepath.Join(dir, "etcd-peer.sock")}
	cfg := embed.NewConfig()
	cfg.Name = "kube-apiserver-test"
	cfg.Dir = filepath.Join(dir, "etcd")
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true // thrown away after the test
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	if !verbose {
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return "", nil, fmt.Errorf("etcd: %w", err)
	case <-time.After(time.Minute):
		e.Close()
		return "", nil, fmt.Errorf("etcd not ready after 1m")
	}
	return "unix://" + client.Path, e.Close, nil
}
