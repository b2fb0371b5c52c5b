package migrate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// TestPreChecksRefuseWithoutWriting: every refusal names the failed check
// and leaves every object's resourceVersion as it was; dry runs write
// nothing either. The simulator is stopped before the commands run, so any
// change would be the command's.
func TestPreChecksRefuseWithoutWriting(t *testing.T) {
	t.Parallel()
	testenv.PerRelease(t, restAndVA, func(t *testing.T, version string) {
		e := newEnv(t, version)
		for name, opts := range map[string]lhsim.NodeOptions{"node-down": {NotReady: true}, "node-cordoned": {Unschedulable: true}} {
			if err := e.Sim.AddNode(e.Ctx, name, opts); err != nil {
				t.Fatal(err)
			}
		}
		e.createAttached(lhsim.VolumeOptions{Migratable: true}, "vol", "vol-used")
		e.createAttached(lhsim.VolumeOptions{}, "vol-rwo")
		e.Sim.Stop()
		// Longhorn's kubernetes-pv controller reports the pod using it.
		status := `{"status":{"kubernetesStatus":{"pvName":"vol-used","pvcName":"vm-disk","namespace":"default","lastPodRefAt":"",` +
			`"workloadsStatus":[{"podName":"virt-launcher-vm1-x7k2p","podStatus":"Running","workloadName":"vm1","workloadType":"VirtualMachineInstance"}]}}}`
		e.MergePatch(longhorn.Volumes, "vol-used", status, "status")
		before := e.resourceVersions()

		for _, tc := range []struct {
			name  string
			args  []string
			code  int
			fails []string
		}{
			{"target not Ready", []string{"vol", "--to", "node-down"}, cmdutil.ExitNeedsAction, []string{"FAIL target node Ready"}},
			{"target not schedulable", []string{"vol", "--to", "node-cordoned"}, cmdutil.ExitNeedsAction, []string{"FAIL target node schedulable"}},
			{"same node", []string{"vol", "--to", nodeA}, cmdutil.ExitNeedsAction, []string{"FAIL target is another node"}},
			{"unknown node", []string{"vol", "--to", "node-x"}, cmdutil.ExitNeedsAction, []string{"FAIL target node exists in Longhorn"}},
			{"not migratable", []string{"vol-rwo", "--to", nodeB}, cmdutil.ExitNeedsAction, []string{"FAIL volume migratable and rwx"}},
			{"in use by a pod", []string{"vol-used", "--to", nodeB}, cmdutil.ExitNeedsAction, []string{"FAIL not in use by a workload", "virt-launcher-vm1-x7k2p"}},
			{"unknown volume", []string{"vol-x", "--to", nodeB}, cmdutil.ExitNoCheck, []string{`volume "vol-x" not found`}},
			{"no terminal to ask", []string{"vol", "--to", nodeB, "--confirm"}, cmdutil.ExitNeedsAction, []string{"stdin is not a terminal and --yes was not given: nothing was changed"}},
		} {
			args := append([]string{"migrate"}, tc.args...)
			if tc.name != "no terminal to ask" {
				args = append(args, "--yes")
			}
			res := e.run(append(args, poll)...)
			if res.Code != tc.code {
				t.Errorf("%s: exit %d, want %d", tc.name, res.Code, tc.code)
			}
			expectContains(t, tc.name+": stderr", res.Stderr, tc.fails...)
			if res.Stdout != "" {
				t.Errorf("%s: stdout %q, want nothing (nothing written)", tc.name, res.Stdout)
			}
		}

		// A piped "y" answers nothing, as for fix: only a terminal is asked.
		piped := clitest.New(t, cluster.KubeconfigPath()).Input(strings.NewReader("y\n")).Run(e.Ctx, "migrate", "vol", "--to", nodeB, "-n", e.NS, poll)
		if piped.Code != cmdutil.ExitNeedsAction || strings.Contains(piped.Stderr, "[y/N]") || !strings.Contains(piped.Stderr, "stdin is not a terminal") {
			t.Errorf("piped y: want exit %d, no question, \"stdin is not a terminal\"; got %s", cmdutil.ExitNeedsAction, piped)
		}

		// Dry runs: the change line with kubectl's suffix, nothing persisted.
		line := fmt.Sprintf("volume.longhorn.io %q patched", "vol")
		if longhorn.MustParseVersion(version).HasVolumeAttachments() {
			line = fmt.Sprintf("volumeattachment.longhorn.io %q patched", "vol")
		}
		res := e.run("migrate", "vol", "--to", nodeB, "--dry-run=server", poll)
		expectCode(t, res, 0)
		expectContains(t, "server dry run", res.Stdout, line+" (server dry run)")
		res = e.run("migrate", "vol", "--to", nodeB, "--dry-run", poll)
		expectCode(t, res, 0)
		expectContains(t, "client dry run", res.Stdout, line+" (dry run)")
		expectContains(t, "client dry run", res.Stderr, "warning: --dry-run is deprecated")
		// --force accepts the workload risk: the pre-checks pass.
		res = e.run("migrate", "vol-used", "--to", nodeB, "--force", "--dry-run=client", poll)
		expectCode(t, res, 0)
		expectContains(t, "forced dry run", res.Stderr, "warning: --force", "Pre-checks passed")

		// Completion: volumes, and --to offers the other nodes only (the
		// word to complete must come last, so the kubeconfig goes first).
		comp := clitest.New(t, "").Run(e.Ctx, "__complete", "migrate", "--kubeconfig", cluster.KubeconfigPath(), "-n", e.NS, "vol", "--to", "")
		expectContains(t, "--to completion", comp.Stdout, "node-b\n", "node-down\n")
		expectNotContains(t, "--to completion", comp.Stdout, "node-a\n")
		comp = clitest.New(t, "").Run(e.Ctx, "__complete", "migrate", "confirm", "--kubeconfig", cluster.KubeconfigPath(), "-n", e.NS, "vol-r")
		expectContains(t, "volume completion", comp.Stdout, "vol-rwo\n")
		expectNotContains(t, "volume completion", comp.Stdout, "vol-used")

		testenv.AssertUnchanged(t, before, e.resourceVersions())
	})
}
