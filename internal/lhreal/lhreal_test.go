package lhreal_test

import (
	"context"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// startRelease starts an API server with the release's own CRDs, seeded
// for the volume controller, and the release's real controllers on
// node-a and node-b.
func startRelease(t *testing.T, release string) (*testcluster.Cluster, *lhreal.Controllers) {
	t.Helper()
	// The build first: a cold one must not eat the start-up deadline.
	if _, err := lhreal.Binary(release); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	crds, err := lhreal.CRDs(release)
	if err != nil {
		t.Fatal(err)
	}
	c, err := testcluster.Start(ctx, testcluster.Options{CRDYAML: crds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	if err := lhreal.Seed(ctx, c, "", testenv.NodeA, testenv.NodeB); err != nil {
		t.Fatal(err)
	}
	lc, err := lhreal.Start(ctx, lhreal.Options{Release: release, Kubeconfig: c.KubeconfigPath(),
		Namespace: c.Namespace(), Nodes: []string{testenv.NodeA, testenv.NodeB}})
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

// The seed's stuck state (two active engines after a confirm) makes each
// release's own volume controller fail every sync with its BUG error; a
// fault on the volume's status update answers instead of the API server
// and counts its hits.
func TestStuckVolume(t *testing.T) {
	for _, release := range lhreal.Releases() {
		t.Run(release, func(t *testing.T) { testStuckVolume(t, release) })
	}
}

func testStuckVolume(t *testing.T, release string) {
	const vol = "pvc-stuck"
	c, lc := startRelease(t, release)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// Owned by node-a while spec.nodeID is node-b: node-b's controller
	// first takes ownership with a status update, which the fault fails.
	id, err := lc.InjectFault(lhreal.Fault{Verb: "update", Resource: "volumes/status", Name: vol, Count: 1})
	if err != nil {
		t.Fatal(err)
	}
	o := testenv.TwoActiveEngines(release, vol)
	o.Volumes[0].Status.OwnerID = testenv.NodeA
	// From 1.5 the attachment controller creates a volume's
	// VolumeAttachment as soon as it sees the volume: create it first.
	for _, va := range o.VAs {
		createVA(ctx, t, c, va)
	}
	o.VAs = nil
	if err := testenv.Create(ctx, c, o); err != nil {
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

// createVA creates a fixture VolumeAttachment valid under Longhorn's own
// schema, which requires every ticket status to list its conditions.
func createVA(ctx context.Context, t *testing.T, c *testcluster.Cluster, va *longhorn.VolumeAttachment) {
	t.Helper()
	u, err := testenv.Unstructured("VolumeAttachment", va)
	if err != nil {
		t.Fatal(err)
	}
	statuses, _ := u.Object["status"].(map[string]any)["attachmentTicketStatuses"].(map[string]any)
	for _, st := range statuses {
		st := st.(map[string]any)
		if st["conditions"] == nil {
			st["conditions"] = []any{}
		}
	}
	if _, err := c.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
}
