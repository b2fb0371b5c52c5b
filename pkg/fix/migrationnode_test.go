package fix_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/faultproxy"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// v153 is the release whose own controller was run after the repair of a
// stale status.currentMigrationNodeID (internal/realtest).
const v153 = "v1.5.3"

func currentMigrationNodeID(t *testing.T, ctx context.Context, vol string) string {
	t.Helper()
	u, err := ri(longhorn.Volumes).Get(ctx, vol, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, _, _ := unstructured.NestedString(u.Object, "status", "currentMigrationNodeID")
	return cm
}

// onlyVolumeWritten: every object but the volume kept its resourceVersion.
func onlyVolumeWritten(t *testing.T, before, after map[string]string, vol string) {
	t.Helper()
	for k, v := range before {
		if k != "volumes/"+vol && after[k] != v {
			t.Errorf("%s written (resourceVersion %s -> %s): the repair writes the volume only", k, v, after[k])
		}
	}
}

// fix VOL on Longhorn 1.5.3: the plan and both dry runs list the one
// write; the real run patches the volume's status subresource pinned to
// its uid and resourceVersion, backs it up first, verifies the field empty
// and the finding gone; a second run has nothing to do. On main (before
// this repair) every run refused with exit 1 and wrote nothing.
func TestFixClearsStaleMigrationNodeID(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.StaleMigrationNodeID(v153, "vol"))
	before := versions(t, ctx)
	write := `1. volume.longhorn.io "vol": status.currentMigrationNodeID: node-b -> "" (status subresource)`

	res := runFix(t, ctx, "vol", "--dry-run=client")
	if res.Code != cmdutil.ExitOK {
		t.Errorf("client dry run: exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, "clear-migration-node", "Writes for vol, in this order:", write,
		`volume.longhorn.io "vol" patched (dry run)`)
	res = runFix(t, ctx, "vol", "--dry-run=server")
	if res.Code != cmdutil.ExitOK {
		t.Errorf("server dry run: exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, write, `volume.longhorn.io "vol" patched (server dry run)`, "server dry run accepted")
	if after := versions(t, ctx); len(after) != len(before) || currentMigrationNodeID(t, ctx, "vol") != testenv.NodeB {
		t.Fatalf("a dry run wrote")
	}
	onlyVolumeWritten(t, before, versions(t, ctx), "")

	dir := filepath.Join(t.TempDir(), "backup")
	res = runFix(t, ctx, "vol", "--yes", "--backup-dir", dir)
	if res.Code != cmdutil.ExitOK {
		t.Fatalf("fix: exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol" patched`+"\n", `volume.longhorn.io "vol" repaired: verified`)
	if cm := currentMigrationNodeID(t, ctx, "vol"); cm != "" {
		t.Errorf("status.currentMigrationNodeID is %q after the repair", cm)
	}
	onlyVolumeWritten(t, before, versions(t, ctx), "vol")
	testenv.Contains(t, "backup", readFile(t, filepath.Join(dir, "vol.yaml")), "kind: Volume", "currentMigrationNodeID: node-b",
		"before: clear-migration-node (status.currentMigrationNodeID node-b)")
	testenv.Contains(t, "actions.log", readFile(t, filepath.Join(dir, fix.ActionLogName)),
		"recheck volume=vol ok", "backup volume=vol", "clear-migration-node volume=vol uid=", "currentMigrationNodeID=node-b dryRun=none attempt",
		"clear-migration-node volume=vol ok", "verify volume=vol ok")

	again := runFix(t, ctx, "vol", "--yes", "--backup-dir", t.TempDir())
	if again.Code != cmdutil.ExitOK || strings.Contains(again.Stdout, "patched") {
		t.Errorf("second run: exit %d, want 0 and no write", again.Code)
	}
	testenv.Contains(t, "stdout+stderr", again.Stdout+again.Stderr, `volume.longhorn.io "vol" healthy: nothing to do`, "Nothing to change.")
}

// Where the repair is not proven, or something still asks for the volume,
// fix refuses with the reason and writes nothing.
func TestFixStaleMigrationNodeIDRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		objs *testenv.Objects
		says string
	}{
		{"1.5.2", testenv.StaleMigrationNodeID(testenv.L15f, "vol"), "not on v1.5.2"},
		{"a csi ticket", func() *testenv.Objects {
			o := testenv.StaleMigrationNodeID(v153, "vol")
			o.VAs = []*longhorn.VolumeAttachment{testenv.NewVA("vol", testenv.NodeB)}
			return o
		}(), "attachment tickets ask for the volume"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, tc.objs)
			before := versions(t, ctx)
			res := runFix(t, ctx, "vol", "--yes", "--backup-dir", t.TempDir())
			if res.Code != cmdutil.ExitNeedsAction {
				t.Errorf("exit %d, want %d", res.Code, cmdutil.ExitNeedsAction)
			}
			testenv.Contains(t, "stdout", res.Stdout, tc.says, `volume.longhorn.io "vol" refused`)
			onlyVolumeWritten(t, before, versions(t, ctx), "")
		})
	}
}

// The volume changes between the re-check and the write: the server refuses
// the pinned patch and the field stays.
func TestFixStaleMigrationNodeIDConflict(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.StaleMigrationNodeID(v153, "vol"))
	res := cli(t, cluster.KubeconfigPath(), fix.Hooks{BeforeWrite: func(name string) { touch(t, ctx, longhorn.Volumes, name) }}).
		Run(ctx, fixArgs("vol", "--yes", "--backup-dir", t.TempDir())...)
	if res.Code != cmdutil.ExitNeedsAction {
		t.Errorf("exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, `the server refused to patch volume vol`, "nothing was written")
	if cm := currentMigrationNodeID(t, ctx, "vol"); cm != testenv.NodeB {
		t.Errorf("status.currentMigrationNodeID %q, want node-b kept", cm)
	}
}

// The one write's answer is lost: fix never resends it, reads the volume
// back and says what the server holds.
func TestFixStaleMigrationNodeIDUnderFaults(t *testing.T) {
	p, kc := faultproxy.ForTest(t, cluster.RESTConfig())
	for _, tc := range []lostWrite{
		{"reset after forwarding", faultproxy.ResetAfter, true, cmdutil.ExitOK,
			[]string{"the answer to the patch of volume vol was lost", `read back: status.currentMigrationNodeID=""`, `volume.longhorn.io "vol" repaired`}, "readBack=applied"},
		{"reset before forwarding", faultproxy.ResetBefore, false, cmdutil.ExitNeedsAction,
			[]string{"did not happen", "it was not retried"}, "readBack=not-applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.StaleMigrationNodeID(v153, "vol"))
			res, dir := fixUnderFault(t, ctx, p, kc, faultproxy.Rule{Verb: "patch", Resource: longhorn.Volumes.Plural, Name: "vol", Fault: tc.fault, First: 1}, tc.code,
				"vol", "--yes")
			expectReported(t, res, dir, tc.out, tc.log)
			sent := 0
			if tc.applied {
				sent = 1
			}
			if n := p.Count("patch", longhorn.Volumes.Plural, "vol"); n != sent {
				t.Errorf("%d patches reached the server, want %d (never resent)", n, sent)
			}
			if cleared := currentMigrationNodeID(t, ctx, "vol") == ""; cleared != tc.applied {
				t.Errorf("cleared %t, want %t", cleared, tc.applied)
			}
		})
	}
}
