package faultproxy

import (
	"testing"

	"k8s.io/client-go/rest"
)

// ForTest starts a proxy in front of cfg's server for one test, closed when
// the test ends, and returns it with a kubeconfig that points at it.
func ForTest(t testing.TB, cfg *rest.Config) (*Proxy, string) {
	t.Helper()
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	kc, err := p.Kubeconfig(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return p, kc
}
