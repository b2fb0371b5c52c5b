package realtest

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// lockedBuffer is written by a child process and read by the test, which
// can also ask when each line arrived.
type lockedBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	partial []byte
	stamped []stampedLine
}

// stampedLine is a line and the time it arrived.
type stampedLine struct {
	text string
	at   time.Time
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.stamped = append(l.stamped, stampedLine{text: string(l.partial[:i]), at: now})
		l.partial = l.partial[i+1:]
	}
	return l.b.Write(p)
}

// lines are the complete lines so far, with their arrival times.
func (l *lockedBuffer) lines() []stampedLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]stampedLine(nil), l.stamped...)
}

// guardLine is one of the guard's stdout lines that say what it did (after
// its timestamp): `kind.longhorn.io "name" verb` for a write (fix's
// kubectl-style line, nothing after the verb), `volume.longhorn.io "name"
// result: detail` for a repair's outcome. Its other lines (`changed: ...`,
// findings, `has stayed repairable ...`) report what it saw and are left out.
type guardLine struct {
	kind, name, verb string
	outcome          bool // a repair's outcome, not a write
	at               time.Time
}

var guardLineRE = regexp.MustCompile(`^(?:\S+Z )?([a-z]+)\.longhorn\.io "([^"]+)" ([a-z-]+)(:.*)?$`)

// guardResults are the results a repair of the guard ends with (it waits
// and verifies, so never fix's unverified "changed", which is also the
// watch's word for an object it saw change).
var guardResults = map[fix.Result]bool{
	fix.ResultRepaired: true, fix.ResultSuperseded: true, fix.ResultTimedOut: true, fix.ResultFailed: true,
	fix.ResultSkipped: true, fix.ResultRefused: true, fix.ResultInverted: true, fix.ResultNotAttempted: true,
}

// guardLines are the guard's writes and outcomes so far, in order.
func (l *lockedBuffer) guardLines() []guardLine {
	var out []guardLine
	for _, sl := range l.lines() {
		m := guardLineRE.FindStringSubmatch(sl.text)
		switch {
		case m == nil:
		case m[4] == "": // a write
			out = append(out, guardLine{kind: m[1], name: m[2], verb: m[3], at: sl.at})
		case m[1] == "volume" && guardResults[fix.Result(m[3])]:
			out = append(out, guardLine{kind: m[1], name: m[2], verb: m[3], outcome: true, at: sl.at})
		}
	}
	return out
}

// outcomes are the guard's repair outcomes of vol so far, in order.
func (l *lockedBuffer) outcomes(vol string) []guardLine { return outcomesOf(l.guardLines(), vol) }

// outcomesOf are the repair outcomes of vol among ls (guardLines marks only
// volume lines as outcomes).
func outcomesOf(ls []guardLine, vol string) []guardLine {
	var out []guardLine
	for _, gl := range ls {
		if gl.outcome && gl.name == vol {
			out = append(out, gl)
		}
	}
	return out
}

// count is how many of the guard's outcomes of vol are result.
func (l *lockedBuffer) count(vol, result string) int {
	n := 0
	for _, o := range l.outcomes(vol) {
		if o.verb == result {
			n++
		}
	}
	return n
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// guardRun is `fix --watch` running as the built plugin.
type guardRun struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	done           chan error
}

// startGuard starts `fix --watch` in this env's namespace and returns once
// it says it watches.
func (e *env) startGuard(args ...string) *guardRun {
	e.t.Helper()
	return e.startGuardAs(e.c.KubeconfigPath(), append([]string{"-n", e.ns}, args...)...)
}

// startGuardAs starts `fix --watch args` through kubeconfig.
func (e *env) startGuardAs(kubeconfig string, args ...string) *guardRun {
	e.t.Helper()
	args = append([]string{"fix", "--watch", "--kubeconfig", kubeconfig}, args...)
	g := &guardRun{cmd: exec.CommandContext(e.ctx, pluginBin, args...), done: make(chan error, 1)}
	g.cmd.Stdout, g.cmd.Stderr = &g.stdout, &g.stderr
	if err := g.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { g.done <- g.cmd.Wait() }()
	e.t.Cleanup(func() { _ = g.cmd.Process.Kill() })
	e.await("the guard watches", func() bool { return strings.Contains(g.stderr.String(), "watching volumes, engines, replicas") })
	return g
}

// stop sends SIGTERM, as an operator's Ctrl-C or the Job's end would, and
// returns the exit code.
func (g *guardRun) stop(e *env) int {
	e.t.Helper()
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-g.done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			e.t.Fatal(err)
		}
		return 0
	case <-time.After(waitTimeout):
		e.t.Fatalf("the guard did not stop on SIGTERM\n--- stderr\n%s", g.stderr.String())
		return -1
	}
}

// await polls cond until it holds or waitTimeout passes.
func (e *env) await(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting until %s", what)
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatal(e.ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// writtenByPlugin lists the plugin's writes to vol's volume, its
// VolumeAttachment (1.5+), engines and replicas, as their managedFields
// record them (object, time, fields): a new write of the plugin adds an
// entry or changes one. Longhorn's and the simulator's own writes do not
// show, so a refusal can be checked while the volume still settles.
func (e *env) writtenByPlugin(vol string) []string {
	e.t.Helper()
	var out []string
	add := func(r longhorn.Resource, u *unstructured.Unstructured) {
		for _, mf := range u.GetManagedFields() {
			if mf.Manager == "kubectl-longhorn-engines" {
				fields := ""
				if mf.FieldsV1 != nil {
					fields = mf.FieldsV1.GetRawString()
				}
				out = append(out, fmt.Sprintf("%s/%s@%s:%s", r.Plural, u.GetName(), mf.Time, fields))
			}
		}
	}
	for _, r := range []longhorn.Resource{longhorn.Volumes, longhorn.VolumeAttachments} {
		u, err := e.c.Dynamic().Resource(r.GVR()).Namespace(e.ns).Get(e.ctx, vol, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			e.t.Fatal(err)
		}
		add(r, u)
	}
	sel := metav1.ListOptions{LabelSelector: longhorn.VolumeLabel + "=" + vol}
	for _, r := range []longhorn.Resource{longhorn.Engines, longhorn.Replicas} {
		l, err := e.c.Dynamic().Resource(r.GVR()).Namespace(e.ns).List(e.ctx, sel)
		if err != nil {
			e.t.Fatal(err)
		}
		for i := range l.Items {
			add(r, &l.Items[i])
		}
	}
	sort.Strings(out)
	return out
}

// TestGuardWhileVolumesMigrate runs `fix --watch` on each release's own
// controllers while one volume migrates and confirms, another migrates and
// rolls back, and a third gets stuck the way users meet it on that
// release: the guard repairs the stuck one only, after --settle, never
// writes the migrating ones, every volume ends settled with no replica
// deleted while active and nothing wiped, and SIGTERM ends it with exit 0.
func TestGuardWhileVolumesMigrate(t *testing.T) {
	forEachConfirmingRelease(t, func(t *testing.T, e *env, rel string) {
		confirmed, rolledBack, stuck := "vol-confirmed", "vol-rolled-back", "vol-stuck"
		for _, v := range []string{confirmed, rolledBack} {
			e.attached(v)
		}
		g := e.startGuard("--yes", "--settle", "3s", "--timeout", "90s", "--backup-dir", t.TempDir())

		e.migrating(confirmed)
		e.migrating(rolledBack)
		old := e.stuck(stuck) // the guard sees this one's migration too
		e.detach(confirmed, nodeA)
		e.detach(rolledBack, nodeB)
		e.waitFor("confirmed on node-b", confirmed, settled(nodeB))
		e.waitFor("rolled back to node-a", rolledBack, settled(nodeA))
		e.await("the guard repaired "+stuck, func() bool {
			return g.stdout.count(stuck, "repaired") > 0
		})
		e.waitFor("converged on node-b", stuck, settled(nodeB))

		if code := g.stop(e); code != 0 {
			t.Errorf("guard exited %d\n--- stderr\n%s", code, g.stderr.String())
		}
		out := g.stdout.String()
		if !strings.Contains(out, `engine.longhorn.io "`+old+`" deactivated`) {
			t.Errorf("the guard did not deactivate the stale engine %s:\n%s", old, out)
		}
		for _, v := range []string{confirmed, rolledBack} {
			if w := e.writtenByPlugin(v); len(w) > 0 {
				t.Errorf("the guard wrote %v of the migrating volume %s", w, v)
			}
			if strings.Contains(out, `volume.longhorn.io "`+v+`" repaired`) {
				t.Errorf("the guard repaired the migrating volume %s", v)
			}
		}
		for _, v := range []string{confirmed, rolledBack, stuck} {
			e.assertNoDamage(v)
		}
	})
}

// TestGuardAfterVolumeMovesOn, on each release's own controllers: a
// migration requested right after the guard's write (while the guard waits
// to verify it) ends that wait as superseded, and on an affected release
// the same volume's next stuck state, after that migration's confirm, is
// repaired in its turn. Before, the wait went on for the engine the guard
// kept until --timeout and the next stuck state waited with it (the soak
// found it on 1.4.3, docs/soak.md).
func TestGuardAfterVolumeMovesOn(t *testing.T) {
	t.Parallel()
	onEachRelease(t, nil, func(t *testing.T, e *env, rel string) {
		vol := "vol-moves-on"
		hit := longhorn.MustParseVersion(rel).Affected()
		g := e.guardWritesThen(vol, func() { e.requestMigration(vol) })
		_, es, _ := e.state(vol)
		keep := testenv.EngineOn(es, nodeB)
		if keep == nil {
			t.Fatalf("no engine left on node-b after the guard's repair")
		}
		if !hit {
			e.detach(vol, nodeC)
			e.waitFor("rolled back to node-b", vol, settled(nodeB))
			e.assertNoDamage(vol)
			return
		}
		// The next stuck state: the migration to node-c is confirmed
		// while the delete of the engine on node-b fails once.
		e.migrationReadyBetween(vol, nodeB, nodeC)
		if _, err := e.lh.InjectFault(lhreal.Fault{Verb: "delete", Resource: "engines", Name: keep.Name, Count: 1, Code: 500}); err != nil {
			t.Fatal(err)
		}
		e.detach(vol, nodeB)
		e.await("the guard repaired the next stuck state", func() bool {
			return g.stdout.count(vol, "repaired") == 1
		})
		e.waitFor("converged on node-c", vol, settled(nodeC))
		if code := g.stop(e); code != 0 {
			t.Errorf("guard exited %d\n--- stderr\n%s", code, g.stderr.String())
		}
		if out := g.stdout.String(); !strings.Contains(out, `engine.longhorn.io "`+keep.Name+`" deactivated`) {
			t.Errorf("the guard did not deactivate %s, the engine left behind by the second confirm:\n%s", keep.Name, out)
		}
		e.assertNoDamage(vol)
	})
}

// TestGuardAfterVolumeDetaches, on each release's own controllers: a
// detach requested right after the guard's write ends the guard's wait as
// superseded (the soak's second finding on 1.4.3: the wait went on for
// the engine it kept, stopped on no node, and held the next volume's
// repair until --timeout). The guard writes nothing more to the detached
// volume, and it attaches again on node-b and settles with nothing lost.
func TestGuardAfterVolumeDetaches(t *testing.T) {
	t.Parallel()
	onEachRelease(t, nil, func(t *testing.T, e *env, rel string) {
		vol := "vol-detaches"
		g := e.guardWritesThen(vol, func() { e.detach(vol, nodeB) })
		e.waitFor("detached", vol, detached)
		written := e.writtenByPlugin(vol)
		e.attach(vol, nodeB)
		e.waitFor("attached again on node-b", vol, settled(nodeB))
		// Longhorn deletes the engine the guard deactivated: entries may go,
		// none may come.
		for _, w := range e.writtenByPlugin(vol) {
			if !slices.Contains(written, w) {
				t.Errorf("the guard wrote to the volume after it was detached: %s (before: %v)", w, written)
			}
		}
		if code := g.stop(e); code != 0 {
			t.Errorf("guard exited %d\n--- stderr\n%s", code, g.stderr.String())
		}
		e.assertNoDamage(vol)
	})
}

// guardWritesThen brings vol to its release's stuck state and, with
// Longhorn's controllers stopped, starts the guard, waits for its write and
// runs then (a request that moves the volume on): Longhorn's next sync sees
// both at once, so the guard's verification cannot end as repaired before
// the volume moves on. The guard's first outcome must be superseded, or on
// a fixed release (which may finish the confirm first) also repaired.
func (e *env) guardWritesThen(vol string, then func()) *guardRun {
	e.t.Helper()
	old := e.stuck(vol)
	e.waitRepairable(vol)
	var g *guardRun
	e.pausedWhile(func() {
		g = e.startGuard("--yes", "--settle", "1s", "--timeout", "4m", "--backup-dir", e.t.TempDir())
		e.waitFor("the guard's write of "+old, vol, func(_ *longhorn.Volume, es []longhorn.Engine, _ []longhorn.Replica) bool {
			s := testenv.EngineNamed(es, old)
			return s == nil || s.DeletionTimestamp != nil || !s.Spec.Active
		})
		then()
	})
	ends := "superseded"
	if !longhorn.MustParseVersion(e.release).Affected() {
		ends = "superseded|repaired"
	}
	var first string
	e.await("the outcome of the guard's first repair", func() bool {
		if outs := g.stdout.outcomes(vol); len(outs) > 0 {
			first = outs[0].verb
		}
		return first != ""
	})
	if !regexp.MustCompile("^(" + ends + ")$").MatchString(first) {
		e.t.Fatalf("the guard's first repair ended %s, want %s:\n%s", first, ends, g.stdout.String())
	}
	return g
}
