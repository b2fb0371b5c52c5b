package scan_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

// The two-active states of a v2 volume on Longhorn 1.12.0, written into an
// API server serving 1.12.0's own CRDs (enginefrontends.longhorn.io among
// them): scan finds them from the cluster, from a support bundle of it and
// from a kubectl dump of it, names the engine (or frontend) to keep and the
// one to change by hand, and repairs nothing.
func TestV2TwoActiveOn1120(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an API server with Longhorn 1.12.0's CRDs")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	crds, err := lhreal.CRDs("v1.12.0")
	if err != nil {
		t.Fatal(err)
	}
	c, err := testcluster.Start(ctx, testcluster.Options{CRDYAML: crds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	const (
		release = "v1.12.0"
		stuck   = "pvc-v2-switchover"
		twoEF   = "pvc-v2-frontends"
		fine    = "pvc-v2-healthy"
	)
	objs := testenv.V2SwitchoverStuck(release, stuck)
	objs.Add(testenv.V2TwoFrontends(release, twoEF)).Add(testenv.V2Healthy(release, fine))
	if err := testenv.Create(ctx, c, objs); err != nil {
		t.Fatal(err)
	}
	oldE, newE := testenv.EngineName(release, stuck, 0), testenv.EngineName(release, stuck, 1)
	check := func(t *testing.T, src string, rep *scan.Report) {
		t.Helper()
		got := map[string]detect.Finding{}
		for _, f := range rep.Findings {
			got[f.Volume] = f
		}
		if f, ok := got[fine]; ok {
			t.Errorf("%s: healthy v2 volume reported: %s", src, f.Reason)
		}
		f := got[stuck]
		if f.Type != detect.TypeMultipleActiveEngines || f.Keep != newE || len(f.Stale) != 1 || f.Stale[0] != oldE || f.Action != detect.ActionNone {
			t.Errorf("%s: %s keep %q stale %v action %s: %s", src, f.Type, f.Keep, f.Stale, f.Action, f.Reason)
		}
		if ef := f.Evidence.EngineFrontends; len(ef) != 1 || ef[0].EngineName != newE || f.Evidence.EngineNodeID != testenv.NodeB || f.Evidence.CurrentEngineNodeID != testenv.NodeA {
			t.Errorf("%s: evidence %+v", src, f.Evidence)
		}
		g := got[twoEF]
		if g.Type != detect.TypeMultipleActiveEngineFrontends || g.Keep != twoEF+"-ef-0" || len(g.Stale) != 1 || g.Stale[0] != twoEF+"-ef-1" {
			t.Errorf("%s: %s keep %q stale %v: %s", src, g.Type, g.Keep, g.Stale, g.Reason)
		}
	}

	run := clitest.New(t, c.KubeconfigPath())
	res := run.Run(ctx, "scan", "-o", "json", "-n", c.Namespace())
	if res.Code != 1 {
		t.Fatalf("scan: want exit 1 (findings):\n%s", res)
	}
	check(t, "cluster", testenv.DecodeReport[scan.Report](t, res.Stdout, "ScanReport"))
	res = run.Run(ctx, "scan", stuck, "-o", "yaml", "-n", c.Namespace())
	if res.Code != 1 || !strings.Contains(res.Stdout, "engineFrontends:") || !strings.Contains(res.Stdout, `"spec":{"active":false}`) {
		t.Errorf("scan %s -o yaml:\n%s", stuck, res)
	}
	res = run.Run(ctx, "scan", "-n", c.Namespace())
	testenv.Contains(t, "scan table", res.Stdout, stuck, "MultipleActiveEngines", twoEF, "MultipleActiveEngineFrontends")

	res = run.Run(ctx, "describe", stuck, "-n", c.Namespace())
	testenv.Contains(t, "describe "+stuck, res.Stdout,
		"spec.engineNodeID:",
		"status.switchoverState:",
		"Engine frontends:",
		stuck+"-ef-0",
		"10.0.1.2:20001",
		"By hand (fix does not do it; read in Longhorn's source):",
		"kubectl -n "+c.Namespace()+" patch engines.longhorn.io "+oldE+` --type=merge -p '{"spec":{"active":false}}'`,
	)

	// fix writes nothing to either volume.
	before, err := testenv.ResourceVersions(ctx, c, testenv.WrittenResources)
	if err != nil {
		t.Fatal(err)
	}
	res = run.Run(ctx, "fix", stuck, twoEF, "--yes", "-n", c.Namespace())
	if res.Code == 0 {
		t.Errorf("fix of unrepairable v2 volumes exited 0:\n%s", res)
	}
	after, err := testenv.ResourceVersions(ctx, c, testenv.WrittenResources)
	if err != nil {
		t.Fatal(err)
	}
	testenv.AssertUnchanged(t, before, after)

	// Offline: a support bundle of the same objects and a kubectl dump.
	items, err := testenv.JSONObjectsFrom(ctx, c.Dynamic(), c.Namespace())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	b := &testenv.Bundle{CreatedAt: time.Now().UTC().Truncate(time.Second), Objects: items}
	zipPath := b.ZipPath(t, dir)
	list, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(dir, "dump.yaml")
	if err := os.WriteFile(dump, list, 0o644); err != nil {
		t.Fatal(err)
	}
	off := clitest.New(t, "")
	for _, args := range [][]string{{"--bundle", zipPath}, {"-f", dump}} {
		res := off.Run(ctx, append([]string{"scan", "-o", "json", "-n", c.Namespace()}, args...)...)
		if res.Code != 1 {
			t.Fatalf("scan %v: want exit 1:\n%s", args, res)
		}
		check(t, args[0], testenv.DecodeReport[scan.Report](t, res.Stdout, "ScanReport"))
	}

	// A dump without the engine frontends is an incomplete check (exit 2),
	// never a clean or a lesser verdict.
	var noEF []map[string]any
	for _, it := range items {
		if it["kind"] != "EngineFrontend" {
			noEF = append(noEF, it)
		}
	}
	list, err = yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": noEF})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dump, list, 0o644); err != nil {
		t.Fatal(err)
	}
	res = off.Run(ctx, "scan", fine, "-f", dump, "-n", c.Namespace())
	if res.Code != 2 || !strings.Contains(res.Stderr, "v2 volume "+fine+" has no EngineFrontend object") {
		t.Errorf("dump without engine frontends: want exit 2 naming them:\n%s", res)
	}
	b = &testenv.Bundle{CreatedAt: time.Now().UTC().Truncate(time.Second), Objects: noEF}
	res = off.Run(ctx, "scan", fine, "--bundle", b.ZipPath(t, t.TempDir()), "-n", c.Namespace())
	if res.Code != 2 || !strings.Contains(res.Stderr, "enginefrontends.yaml") {
		t.Errorf("bundle without engine frontends: want exit 2 naming them:\n%s", res)
	}
}

// A v2 volume on 1.12 where the server has no enginefrontends.longhorn.io
// (the CRD missing): the check is incomplete, exit 2, never "nothing
// found"; a v1 volume there is checked as before.
func TestV2FrontendsKindMissing(t *testing.T) {
	ctx := cluster.ResetForTest(t, time.Minute)
	objs := testenv.V2Healthy("v1.12.0", "pvc-v2")
	objs.EFs = nil
	objs.Add(testenv.Healthy("v1.12.0", "pvc-v1"))
	if err := testenv.Create(ctx, cluster, objs); err != nil {
		t.Fatal(err)
	}
	run := clitest.New(t, cluster.KubeconfigPath())
	for _, args := range [][]string{{"scan"}, {"scan", "pvc-v2"}, {"describe", "pvc-v2"}} {
		res := run.Run(ctx, args...)
		if res.Code != 2 || !strings.Contains(res.Stderr, "enginefrontends.longhorn.io") {
			t.Errorf("%v: want exit 2 naming enginefrontends.longhorn.io:\n%s", args, res)
		}
	}
	if res := run.Run(ctx, "scan", "pvc-v1"); res.Code != 0 {
		t.Errorf("scan of a v1 volume: want exit 0:\n%s", res)
	}
}
