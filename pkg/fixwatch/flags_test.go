package fixwatch_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Flag mistakes are one error line and exit 2, before any request.
func TestGuardFlags(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fix", "--watch", "--yes", "--settle", "0s"}, "error: --settle must be positive"},
		{[]string{"fix", "--watch", "--yes", "--for", "-1s"}, "error: --for must be positive"},
		{[]string{"fix", "--watch", "--yes", "--all", "vol"}, "error: name volumes or pass --all, not both"},
		{[]string{"fix", "--watch", "--yes", "--dry-run=maybe"}, `error: invalid --dry-run value "maybe": must be "none", "server", or "client"`},
		{[]string{"fix", "--watch", "--yes", "--strategy=wipe"}, "error: --strategy must be one of auto, deactivate, delete"},
		{[]string{"fix", "--watch", "--yes", "--backup-to=s3"}, `error: --backup-to must be dir or configmap (got "s3")`},
		{[]string{"fix", "vol", "--for", "1h"}, "error: --for and --settle need --watch"},
		{[]string{"fix", "--all", "--settle", "1m"}, "error: --for and --settle need --watch"},
		{[]string{"fix", "vol", "--metrics-bind-address", ":8080"}, "error: --metrics-bind-address needs --watch"},
	} {
		res := cli(t, cluster.KubeconfigPath()).Run(ctx, tc.args...)
		if res.Code != cmdutil.ExitNoCheck || res.Stdout != "" || strings.Count(res.Stderr, "\n") != 1 || !strings.HasPrefix(res.Stderr, tc.want) {
			t.Errorf("%v: want exit 2 and one line %q:\n%s", tc.args, tc.want, res)
		}
	}
}

// A metrics address that cannot be bound stops the guard at start, exit 2,
// before it watches or changes anything: the Job asked for metrics and
// would otherwise run for hours unseen.
func TestGuardMetricsAddressInUse(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.4.3", "")
	e.produceBug("vol-1")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	res := cli(t, cluster.KubeconfigPath()).Run(e.Ctx, "fix", "--watch", "--yes", "-n", e.NS, "--settle", settle.String(),
		"--backup-dir", t.TempDir(), "--metrics-bind-address", ln.Addr().String())
	lines := strings.Split(strings.TrimRight(res.Stderr, "\n"), "\n")
	if last := lines[len(lines)-1]; res.Code != cmdutil.ExitNoCheck || !strings.HasPrefix(last, "error: --metrics-bind-address "+ln.Addr().String()+": ") ||
		!strings.HasSuffix(last, ": nothing was watched or changed") {
		t.Errorf("want exit 2 and the address that cannot be bound:\n%s", res)
	}
	lacks(t, "stdout", res.Stdout, "deactivated")
	e.WaitStuck("vol-1")
}

// Named volumes the namespace does not have are refused at start: a typo
// would otherwise guard nothing for hours.
func TestGuardUnknownVolume(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.4.3", "")
	e.CreateAttached("vol-1")
	res := cli(t, cluster.KubeconfigPath()).Run(e.Ctx, "fix", "--watch", "--dry-run=client", "-n", e.NS, "vol-1", "vol-typo")
	if res.Code != cmdutil.ExitNoCheck || !strings.HasSuffix(res.Stderr, "error: volume \"vol-typo\" not found in namespace \""+e.NS+"\"\n") {
		t.Errorf("want exit 2 and the unknown volume named:\n%s", res)
	}
}

// With volume names the guard watches only them: events of other volumes
// are not even logged, and their bugs are not repaired.
func TestGuardNamedVolumesOnly(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.4.3", "")
	e.produceBug("vol-other")
	e.CreateAttached("vol-mine")
	g := startGuard(t, e.Ctx, cluster.KubeconfigPath(), e.NS, "vol-mine", "--yes", "--settle", settle.String(), "--backup-dir", t.TempDir())
	_, mig := e.StartMigration("vol-mine")
	fid := e.confirmWithFault("vol-mine")
	if out := g.awaitOutcome(e.Ctx, "vol-mine", 1); out.Result != fix.ResultRepaired {
		t.Errorf("outcome %s: %s", out.Result, out.Detail)
	}
	e.ExpectConverged("vol-mine", testenv.NodeB, mig)
	res := g.stop()
	if res.Code != 0 || e.Sim.FaultHits(fid) != 1 {
		t.Errorf("exit %d, fault hits %d", res.Code, e.Sim.FaultHits(fid))
	}
	lacks(t, "output", res.Stdout+res.Stderr, "vol-other")
	testenv.Contains(t, "stderr", res.Stderr, "(Longhorn v1.4.3, 1 volume(s))")
	if len(g.outcomes("vol-other")) != 0 {
		t.Error("vol-other was repaired")
	}
}

// An upgrade during the window (the version setting changes) is followed:
// the guard reports it, starts watching volume attachments on 1.5+, and
// classifies every volume again with the new version's rules.
func TestGuardFollowsAnUpgrade(t *testing.T) {
	t.Parallel()
	e := newSim(t, "v1.4.3", "")
	e.CreateAttached("vol-1")
	g := startGuard(t, e.Ctx, cluster.KubeconfigPath(), e.NS, "--dry-run=client")
	e.MergePatch(longhorn.Settings, longhorn.VersionSetting, `{"value":"v1.6.0"}`)
	g.l.await(t, e.Ctx, g.done, "classified with v1.6.0", func(l *listeners) bool { return l.version["vol-1"] == "v1.6.0" })
	res := g.stop()
	if res.Code != 0 {
		t.Errorf("exit %d", res.Code)
	}
	testenv.Contains(t, "stdout", res.Stdout, `setting.longhorn.io "current-longhorn-version" changed: value=v1.6.0 (was value=v1.4.3)`)
	testenv.Contains(t, "stderr", res.Stderr, "watching volumes, engines, replicas in namespace", "Longhorn is now v1.6.0: watching volumeattachments.longhorn.io too")
}
