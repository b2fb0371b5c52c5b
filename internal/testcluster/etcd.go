package testcluster

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// maxUnixSocketPath is the portable limit of sockaddr_un.sun_path, minus NUL.
const maxUnixSocketPath = 103

// startEtcd starts an embedded single-member etcd in dir. It listens on unix
// sockets in dir (no ports to race for, nothing reachable from outside) and
// falls back to ephemeral 127.0.0.1 ports when sockets can't be used (a
// TMPDIR too long for a socket path, say). It returns the client endpoint.
func startEtcd(ctx context.Context, dir string, logs bool) (*embed.Etcd, string, error) {
	clientSock := filepath.Join(dir, "etcd-client.sock")
	peerSock := filepath.Join(dir, "etcd-peer.sock")
	if len(peerSock) <= maxUnixSocketPath {
		e, err := runEtcd(ctx, dir, "etcd-unix", logs,
			url.URL{Scheme: "unix", Path: clientSock}, url.URL{Scheme: "unix", Path: peerSock})
		if err == nil {
			return e, "unix://" + clientSock, nil
		}
	}
	clientPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freePort()
	if err != nil {
		return nil, "", err
	}
	clientURL := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	e, err := runEtcd(ctx, dir, "etcd-tcp", logs,
		clientURL, url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)})
	if err != nil {
		return nil, "", err
	}
	return e, clientURL.String(), nil
}

func runEtcd(ctx context.Context, dir, name string, logs bool, client, peer url.URL) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = "testcluster"
	cfg.Dir = filepath.Join(dir, name)
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// The data is thrown away after the test: fsync would only add latency
	// to every write.
	cfg.UnsafeNoFsync = true
	// Faster ticks make the single member elect itself sooner at start-up.
	cfg.TickMs = 10
	cfg.ElectionMs = 100
	cfg.Metrics = "basic"
	if !logs {
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("testcluster: start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("testcluster: etcd failed: %w", err)
	case <-ctx.Done():
		e.Close()
		return nil, ctx.Err()
	case <-time.After(time.Minute):
		e.Close()
		return nil, fmt.Errorf("testcluster: etcd not ready within a minute")
	}
}

// freePort asks the kernel for a free loopback port. It is released again
// before etcd binds it, so a fallback run can race; sockets avoid that.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
