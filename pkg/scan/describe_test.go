package scan_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/scan"
)

const (
	vmVolume    = "pvc-7b120d60-1577-4716-be5a-62348271025a" // repairable, used by a VM
	refused4827 = "pvc-0c9f1f3e-6a55-4f0d-9d7c-3e2b8f4a1d22" // refused: spec.nodeID empty
	pendingVol  = "pvc-3d4e5f60-7182-4a3b-9c8d-0e1f2a3b4c5d"
)

func describeReal(t *testing.T, version string, logs map[string]detect.LogEvidence, names ...string) string {
	t.Helper()
	st := realState(t, version)
	res := detect.Classify(st, detect.Options{})
	detect.AttachLogs(st, &res, logs, detect.Options{})
	var b bytes.Buffer
	if err := scan.Describe(&b, st, res, names, cmdutil.NewPainter(false), 110); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestDescribeGolden(t *testing.T) {
	first := time.Date(2026, 12, 2, 21, 4, 5, 0, time.UTC)
	logs := map[string]detect.LogEvidence{vmVolume: {Count: 42, FirstSeen: first, LastSeen: first.Add(90 * time.Minute),
		Message: "BUG: found the second active engine x besides y", Files: []string{"logs/longhorn-system/longhorn-manager-abcde/longhorn-manager.log"}}}
	for _, tc := range []struct {
		file, version string
		logs          map[string]detect.LogEvidence
		names         []string
	}{
		{"describe-v1.4.3.golden", "v1.4.3", logs, []string{vmVolume, refused4827, pendingVol}},
		{"describe-v1.5.1.golden", "v1.5.1", nil, []string{vmVolume}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := describeReal(t, tc.version, tc.logs, tc.names...)
			golden(t, tc.file, got)
		})
	}
}

// What a person needs from describe is there, in words: every precondition
// marked, what failed, the decision and the command.
func TestDescribeSaysWhatAndHow(t *testing.T) {
	testenv.Contains(t, "describe "+refused4827, describeReal(t, "v1.4.3", nil, refused4827),
		"✗ current node is known and equals spec.nodeID",
		"spec.nodeID is empty: Longhorn does not process this volume's engines (longhorn#4827)",
		"✓ Longhorn version is known",
		"Decision:                       no repair: spec.nodeID is empty",
		"PVC:                            databases/data-postgres-0",
	)
	out := describeReal(t, "v1.4.3", nil, vmVolume)
	testenv.Contains(t, "describe "+vmVolume, out,
		"Repair:                         kubectl longhorn-engines fix "+vmVolume+" -n longhorn-system",
		"Used by:                        VirtualMachineInstance/vm-ubuntu-01",
		"Decision:                       deactivate",
	)
	if strings.Contains(out, "✗") {
		t.Errorf("a repairable volume shows a failed precondition:\n%s", out)
	}
	out = describeReal(t, "v1.5.1", nil, vmVolume)
	if !strings.Contains(out, "Attachment tickets:") || !strings.Contains(out, "Decision:                       delete") {
		t.Errorf("1.5.1: no tickets or not a delete:\n%s", out)
	}
}

// Through the command: a healthy volume, a stuck one, an unknown one.
func TestDescribeCommand(t *testing.T) {
	ctx := reset(t)
	objs := testenv.Nodes().Add(testenv.Healthy("v1.4.3", "fine")).Add(testenv.TwoActiveEngines("v1.4.3", "stuck"))
	if err := testenv.Create(ctx, cluster, objs); err != nil {
		t.Fatal(err)
	}
	res := clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "describe", "fine")
	if res.Code != 0 || !strings.Contains(res.Stdout, "Finding:                        none") || !strings.Contains(res.Stdout, "current") {
		t.Errorf("healthy volume: want exit 0 and no finding:\n%s", res)
	}
	res = clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "describe", "stuck", "fine", "--color", "never")
	if res.Code != 1 || strings.Count(res.Stdout, "Name:") != 2 || !strings.Contains(res.Stdout, "kubectl longhorn-engines fix stuck -n longhorn-system") {
		t.Errorf("stuck volume: want exit 1, two blocks and the fix command:\n%s", res)
	}
	res = clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "describe", "nope")
	if res.Code != 2 || res.Stdout != "" || !strings.HasPrefix(res.Stderr, "error: ") {
		t.Errorf("unknown volume: want exit 2, one error line:\n%s", res)
	}
	res = clitest.New(t, cluster.KubeconfigPath()).Run(ctx, "describe")
	if res.Code == 0 {
		t.Errorf("describe without a volume succeeded:\n%s", res)
	}
}

// describe of a stale status.currentMigrationNodeID on Longhorn 1.5.3, which
// fix repairs: the decision is the one write, the repair is fix's command,
// and the maintainers' steps no longer say fix does not do it.
func TestDescribeStaleMigrationNodeIDRepair(t *testing.T) {
	v := testenv.NewVolume("vol", testenv.NodeA)
	v.Spec.NodeID, v.Status.CurrentNodeID, v.Status.State = "", "", "detached"
	v.Status.CurrentMigrationNodeID = testenv.NodeB
	e := testenv.NewEngine("vol-e-0", "vol", "", true)
	e.Status.CurrentState = "stopped"
	st := &longhorn.State{Namespace: longhorn.DefaultNamespace, Version: longhorn.MustParseVersion("v1.5.3"),
		Volumes: []longhorn.Volume{*v}, Engines: []longhorn.Engine{*e}, VolumeAttachments: []longhorn.VolumeAttachment{*testenv.NewVA("vol")}}
	res := detect.Classify(st, detect.Options{})
	var b bytes.Buffer
	if err := scan.Describe(&b, st, res, []string{"vol"}, cmdutil.NewPainter(false), 200); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	testenv.Contains(t, "describe vol", out,
		"StaleMigrationNodeID (warning)",
		"✓ the repair is proven on this release",
		"clear status.currentMigrationNodeID (node-b) on the status subresource",
		"kubectl longhorn-engines fix vol",
		"Maintainers' repair (fix makes it, see Repair; by hand):",
	)
	if strings.Contains(out, "fix does not do it") || strings.Contains(out, "no automatic repair") {
		t.Errorf("describe says fix does not repair it:\n%s", out)
	}
}
