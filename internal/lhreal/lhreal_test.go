package lhreal_test

import (
	"context"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/fixture"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

// startRelease starts an API server with the release's own CRDs, seeded
// for the volume controller, and the release's real controllers on
// node-a and node-b.
func startRelease(t *testing.T, release string) (*testcluster.Cluster, *lhreal.Controllers) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := lhreal.Binary(release); err != nil {
		t.Fatal(err)
	}
	crds, err := lhreal.CRDs(release)
	if err != nil {
		t.Fatal(err)
	}
	c, err := testcluster.Start(ctx, testcluster.Options{CRDYAML: crds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if err := lhreal.Seed(ctx, c, "", fixture.NodeA, fixture.NodeB); err != nil {
		t.Fatal(err)
	}
	lc, err := lhreal.Start(ctx, lhreal.Options{Release: release, Kubeconfig: c.KubeconfigPath(),
		Namespace: c.Namespace(), Nodes: []string{fixture.NodeA, fixture.NodeB}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		lc.Stop()
		if t.Failed() {
			t.Logf("controller logs:\n%s", lc.Logs())
		}
	})
	return c, lc
}

// The seed's stuck state (two active engines after a confirm) makes
// Longhorn v1.4.3's own volume controller fail every sync with its BUG
// error; a fault on the volume's status update answers instead of the API
// server and counts its hits.
func TestStuckVolumeV143(t *testing.T) {
	const release, vol = "v1.4.3", "pvc-stuck"
	c, lc := startRelease(t, release)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Owned by node-a while spec.nodeID is node-b: node-b's controller
	// first takes ownership with a status update, which the fault fails.
	id, err := lc.InjectFault(lhreal.Fault{Verb: "update", Resource: "volumes/status", Name: vol, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	o := fixture.TwoActiveEngines(release, vol)
	o.Volumes[0].Status.OwnerID = fixture.NodeA
	if err := fixture.Create(ctx, c, o); err != nil {
		t.Fatal(err)
	}
	if err := lc.WaitLog(ctx, "BUG: found the second active engine"); err != nil {
		t.Fatal(err)
	}
	if err := lc.WaitLog(ctx, "injected fault"); err != nil {
		t.Fatal(err)
	}
	if hits := lc.FaultHits(id); hits != 1 {
		t.Errorf("fault hits = %d, want 1 (the controller's status update of %s)", hits, vol)
	}
}
