package realtest

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/kubeserver"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhreal"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// The soak (docs/soak.md; `make soak`): volumes live-migrate back and forth
// between node-a and node-b as node drains move them during an upgrade
// (1.4: spec.migrationNodeID; 1.5+: csi-attacher tickets), with rollbacks,
// detaches and reboots of the drained node, while faults are injected at
// random into the requests of Longhorn's own controllers and the guard runs
// as a separate process with the Job's arguments (deploy/guard-job.yaml).
// The invariants are checked after every drain; make test runs a sample.

const (
	nodeD = "node-d"
	// soakSample is make test's number of migrations per release.
	soakSample = 8
	// soakSyncBound is "one sync" in the bound on a repair (settle + one
	// sync): the guard's fix, Longhorn's convergence and the verification.
	soakSyncBound = 60 * time.Second
)

// soakConfig is the run's shape: SOAK_MIGRATIONS, SOAK_VOLUMES, SOAK_SEED
// and SOAK_SETTLE (the guard's --settle; the Job's 60 s makes a long run
// mostly waiting).
type soakConfig struct {
	Migrations int
	Volumes    int
	Seed       int64
	Settle     time.Duration
}

func soakConfigFromEnv(t *testing.T) soakConfig {
	t.Helper()
	c := soakConfig{Migrations: soakSample, Volumes: 4, Seed: 1, Settle: 5 * time.Second}
	for name, into := range map[string]*int{"SOAK_MIGRATIONS": &c.Migrations, "SOAK_VOLUMES": &c.Volumes} {
		if s := os.Getenv(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a whole number above 0", name, s)
			}
			*into = n
		}
	}
	if s := os.Getenv("SOAK_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("SOAK_SEED=%q: %v", s, err)
		}
		c.Seed = n
	}
	if s := os.Getenv("SOAK_SETTLE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("SOAK_SETTLE=%q: %v", s, err)
		}
		c.Settle = d
	}
	return c
}

// soakFaults are the faults injected into Longhorn's own requests: refusals
// (conflicts, server errors, throttling), writes that land but answer a
// timeout, from the server ("after": a 504) or from the client's deadline
// ("timeout": no answer), and connection resets. Name "" hits whichever
// request of that kind comes next.
var soakFaults = []lhreal.Fault{
	{Verb: "update", Resource: "volumes", Code: 409},
	{Verb: "update", Resource: "volumes/status", Code: 500},
	{Verb: "update", Resource: "volumes", Code: 504, Mode: "after"},
	{Verb: "update", Resource: "engines", Code: 409},
	{Verb: "update", Resource: "engines/status", Code: 503},
	{Verb: "update", Resource: "engines", Code: 504, Mode: "after"},
	{Verb: "create", Resource: "engines", Code: 504, Mode: "after"},
	{Verb: "delete", Resource: "engines", Code: 500},
	{Verb: "update", Resource: "replicas", Code: 500},
	{Verb: "update", Resource: "replicas/status", Code: 429},
	{Verb: "update", Resource: "replicas", Mode: "reset"},
	{Verb: "create", Resource: "replicas", Mode: "reset"},
	{Verb: "delete", Resource: "replicas", Code: 504, Mode: "after"},
	{Verb: "update", Resource: "volumeattachments", Code: 409},
	{Verb: "update", Resource: "volumes", Mode: "timeout"},
	{Verb: "update", Resource: "engines", Mode: "timeout"},
	// on 1.4.x a confirm's delete answered so leaves DanglingReplicas
	// (TestConfirmDeleteTimeout), which the guard repairs
	{Verb: "delete", Resource: "engines", Mode: "timeout"},
}

func faultKind(f lhreal.Fault) string {
	what := strconv.Itoa(f.Code)
	switch f.Mode {
	case "after":
		what += " after the write"
	case "timeout":
		what = "client timeout after the write"
	case "reset":
		what = "reset"
	}
	return fmt.Sprintf("%s %s %s", f.Verb, f.Resource, what)
}

// soakResult is one release's row of the report.
type soakResult struct {
	Release                           string
	Stopped                           bool // ended on a failure, before the end-of-run checks: no counts
	Migrations, Confirmed, RolledBack int
	Detaches, Flaps                   int
	Faults                            map[string]int  // kind → requests failed
	SeedFaults                        int             // the seed's failed delete of the old engine, hit
	TwoActive                         int             // two active engines seen, however briefly
	Stuck                             int             // of those, Longhorn's controller logged the BUG error
	Repaired                          int             // stuck states the guard repaired
	Dangling                          int             // dangling-replica states Longhorn logged with no replica to start (DanglingReplicas)
	DanglingRepaired                  int             // of those, repaired by the guard (superseded ones counted in Superseded too)
	Superseded                        int             // of those, the volume moved on before the repair's verification
	StuckTimes                        []time.Duration // from a stuck state's start to its end
	RepairTimes                       []time.Duration // from a stuck state's start to the verified repair
	Wiped, ActiveDeleted, DataLost    int
	GuardWritesNotStuck               int
	BackupConfigMaps                  int // the guard's backups (--backup-to configmap)
	WritesNotBackedUp                 int // guard writes with no backup ConfigMap of their volume before them
	NotConverged                      []string
	GuardPeakRSSKiB                   int64
	GuardCPU, Wall                    time.Duration
	Violations                        []string
	Settle                            time.Duration
	VolumesN                          int
}

var (
	soakMu      sync.Mutex
	soakResults []soakResult
)

// TestSoak drives SOAK_MIGRATIONS live migrations per release with faults
// injected into Longhorn's controllers and the guard running, and fails on
// any broken invariant: a data directory in use wiped, data lost, an active
// replica deleted, a guard write to a volume not stuck, a stuck state not
// repaired within settle + one sync, a volume that does not converge. With
// SOAK_REPORT=file it writes the report there (make soak: docs/soak.md).
func TestSoak(t *testing.T) {
	t.Parallel()
	cfg := soakConfigFromEnv(t)
	if report := os.Getenv("SOAK_REPORT"); report != "" {
		t.Cleanup(func() {
			if err := os.WriteFile(report, []byte(soakReport(cfg, os.Getenv("SOAK_COMMAND"))), 0o644); err != nil {
				t.Error(err)
			}
		})
	}
	for _, rel := range releasesOrSkip(t) {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			skipUnprovenConfirm(t, rel)
			// a run that stopped on a failure still gets its row
			stopped := true
			defer func() {
				if stopped {
					soakMu.Lock()
					soakResults = append(soakResults, soakResult{Release: rel, Stopped: true, Faults: map[string]int{}, Violations: []string{"the run stopped on a failure (see the test's log)"}})
					soakMu.Unlock()
				}
			}()
			s := newSoak(t, rel, cfg)
			s.run()
			res := s.result()
			stopped = false
			soakMu.Lock()
			soakResults = append(soakResults, res)
			soakMu.Unlock()
			for _, v := range res.Violations {
				t.Error(v)
			}
			s.logRecord()
			t.Logf("soak %s: %d migrations (%d confirmed, %d rolled back), %d detaches, %d flaps, faults %v, two-active %d, stuck %d, repaired %d in %v, backup ConfigMaps %d, guard peak RSS %d KiB, CPU %v, wall %v",
				rel, res.Migrations, res.Confirmed, res.RolledBack, res.Detaches, res.Flaps, res.Faults, res.TwoActive, res.Stuck, res.Repaired,
				res.RepairTimes, res.BackupConfigMaps, res.GuardPeakRSSKiB, res.GuardCPU, res.Wall)
		})
	}
}

// soak is one release's run.
type soak struct {
	*env
	srv     *kubeserver.Server
	cfg     soakConfig
	rng     *rand.Rand
	vols    []string
	on      map[string]string // volume → the node it is attached to
	guard   *guardRun
	engines *engineWatch
	res     soakResult
	start   time.Time
	seeded  []int // ids of the seed's faults
}

func newSoak(t *testing.T, rel string, cfg soakConfig) *soak {
	t.Helper()
	// Room for every migration at the slowest (a stuck one: settle, then
	// the repair) besides the set-up.
	timeout := 10*time.Minute + time.Duration(cfg.Migrations)*(cfg.Settle+soakSyncBound)
	srv := soakServer(t, rel)
	e := newEnvOn(t, rel, srv, kubeserver.Namespace, []string{nodeA, nodeB, nodeC, nodeD}, timeout)
	s := &soak{env: e, srv: srv, cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), on: map[string]string{}, start: time.Now()}
	s.res = soakResult{Release: rel, Faults: map[string]int{}, Settle: cfg.Settle, VolumesN: cfg.Volumes}
	// Replicas live on node-c and node-d, so that a drained node can reboot
	// with nothing of a volume on it, as an upgrade reboots it.
	for _, n := range []string{nodeA, nodeB} {
		if err := e.sim.AddNode(e.ctx, n, lhsim.NodeOptions{Unschedulable: true}); err != nil {
			t.Fatal(err)
		}
	}
	s.engines = e.watchEngines()
	for i := 0; i < cfg.Volumes; i++ {
		v := fmt.Sprintf("soak-%d", i)
		s.vols = append(s.vols, v)
		if err := e.sim.CreateVolume(e.ctx, v, lhsim.VolumeOptions{Migratable: true, Replicas: 2}); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range s.vols {
		e.waitFor("volume created and detached", v, func(vo *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
			return vo.Status.State == longhorn.VolumeStateDetached && len(es) == 1 && len(rs) >= 2
		})
		s.attach(v, nodeA)
	}
	for _, v := range s.vols {
		e.waitFor("attached to node-a", v, settled(nodeA))
		s.on[v] = nodeA
	}
	kc, err := srv.GuardAccount(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.guard = e.startGuardAs(kc, guardJobArgs(t, cfg.Settle)...)
	return s
}

// soakServer starts Kubernetes' own kube-apiserver with rel's CRDs for one
// soak, so that the guard runs as the Job does: as deploy/rbac-guard.yaml's
// ServiceAccount, in its namespace, backing up to ConfigMaps and recording
// Events.
func soakServer(t *testing.T, rel string) *kubeserver.Server {
	t.Helper()
	suite.Cluster(t, rel) // skips or fails as every release's test does
	crds, err := lhreal.CRDs(rel)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, err := kubeserver.StartWith(ctx, kubeserver.Options{CRDYAML: crds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// guardJobArgs are the guard Job's arguments (deploy/guard-job.yaml) as
// the soak runs them: the backup folder a test's own, metrics on a free
// loopback port, and --settle as configured.
func guardJobArgs(t *testing.T, settle time.Duration) []string {
	t.Helper()
	b, err := os.ReadFile("../../deploy/guard-job.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	if err := yaml.Unmarshal(b, &job); err != nil {
		t.Fatal(err)
	}
	args := job.Spec.Template.Spec.Containers[0].Args
	if len(args) < 2 || args[0] != "fix" || args[1] != "--watch" {
		t.Fatalf("deploy/guard-job.yaml: the guard's arguments are %q, not fix --watch ...", args)
	}
	out := []string{}
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--backup-dir":
			out = append(out, a, t.TempDir())
			i++
		case "--metrics-bind-address":
			out = append(out, a, "127.0.0.1:0")
			i++
		case "--settle":
			out = append(out, a, settle.String())
			i++
		default:
			out = append(out, a)
		}
	}
	return out
}

// run drains node-a and node-b in turn until the migrations are done, then
// lets every volume converge and stops the guard.
func (s *soak) run() {
	src, dst := nodeA, nodeB
	for s.res.Migrations < s.cfg.Migrations {
		s.drain(src, dst)
		s.check("after draining " + src)
		s.t.Logf("soak %s: %d of %d migrations, %v", s.release, s.res.Migrations, s.cfg.Migrations, time.Since(s.start).Round(time.Second))
		if s.drained(src) {
			s.flap(src)
		}
		src, dst = dst, src
	}
	if err := s.lh.ClearFaults(); err != nil {
		s.t.Fatal(err)
	}
	for _, v := range s.vols {
		if err := s.sim.WaitFor(s.ctx, v, settled(s.on[v])); err != nil {
			s.res.NotConverged = append(s.res.NotConverged, fmt.Sprintf("%s (on %s): %v", v, s.on[v], err))
		}
	}
	s.check("at the end")
	s.awaitGuardOutcomes()
	// VmHWM, not the rusage after exit: a child's ru_maxrss counts the
	// test process's memory it was forked from.
	s.res.GuardPeakRSSKiB = vmHWM(s.guard.cmd.Process.Pid)
	if code := s.guard.stop(s.env); code != 0 {
		s.violate("the guard exited %d\n%s", code, tailLines(s.guard.stderr.String(), 20))
	}
	if ps := s.guard.cmd.ProcessState; ps != nil {
		s.res.GuardCPU = ps.UserTime() + ps.SystemTime()
	}
	s.res.Wall = time.Since(s.start)
}

// vmHWM is a process's peak resident set in KiB (0 if unknown).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

func (s *soak) drained(node string) bool {
	for _, v := range s.vols {
		if s.on[v] == node {
			return false
		}
	}
	return true
}

// drain moves every volume on src to dst as a node drain does: a
// migration each, all at once; some roll back (the drain retries them),
// some are detached and attached again instead (a VM stopped and started).
func (s *soak) drain(src, dst string) {
	for attempt := 1; attempt <= 3 && !s.drained(src); attempt++ {
		s.injectFaults()
		var migrating, moved []string
		for _, v := range s.vols {
			if s.on[v] != src || s.res.Migrations >= s.cfg.Migrations {
				continue
			}
			if s.rng.Intn(10) == 0 {
				s.detach(v, src)
				moved = append(moved, v)
				continue
			}
			s.attach(v, dst)
			migrating = append(migrating, v)
			s.res.Migrations++
		}
		expect := map[string]string{}
		for _, v := range migrating {
			old, _ := s.migrationReadyBetween(v, src, dst)
			// the last attempt confirms: a drain ends with the node empty
			if attempt < 3 && s.rng.Intn(5) == 0 {
				s.env.detach(v, dst)
				expect[v] = src
				s.res.RolledBack++
				continue
			}
			if s.rng.Intn(10) < 3 {
				id, err := s.lh.InjectFault(lhreal.Fault{Verb: "delete", Resource: "engines", Name: old, Count: 1, Code: 500})
				if err != nil {
					s.t.Fatal(err)
				}
				s.seeded = append(s.seeded, id)
			}
			s.env.detach(v, src)
			expect[v] = dst
			s.res.Confirmed++
		}
		for _, v := range migrating {
			s.waitWithin(s.cfg.Settle+soakSyncBound+waitTimeout, "migration of "+v+" ended on "+expect[v], v, settled(expect[v]))
			s.on[v] = expect[v]
		}
		for _, v := range moved {
			s.attach(v, dst)
			s.waitWithin(waitTimeout, "attached again to "+dst, v, settled(dst))
			s.on[v] = dst
		}
		s.collectFaults()
	}
}

// detach detaches v from node altogether and waits until it is detached.
func (s *soak) detach(v, node string) {
	s.env.detach(v, node)
	s.waitWithin(waitTimeout, "detached", v, func(vo *longhorn.Volume, _ []longhorn.Engine, _ []longhorn.Replica) bool {
		return vo.Status.State == longhorn.VolumeStateDetached
	})
	s.res.Detaches++
}

// flap reboots a drained node: down, every volume still served from the
// other node meanwhile, and up again.
func (s *soak) flap(node string) {
	if err := s.setNodeReady(node, false); err != nil {
		s.t.Fatal(err)
	}
	for _, v := range s.vols {
		s.waitFor("served from "+s.on[v]+" while "+node+" is down", v, settled(s.on[v]))
	}
	if err := s.setNodeReady(node, true); err != nil {
		s.t.Fatal(err)
	}
	s.res.Flaps++
}

func (s *soak) waitWithin(d time.Duration, what, vol string, cond func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, d)
	defer cancel()
	if err := s.sim.WaitFor(ctx, vol, cond); err != nil {
		v, es, rs := s.state(vol)
		s.t.Fatalf("Longhorn %s: %s: %v\nvolume %s: node %q migration %q current %q state %s\nengines %s\nreplicas %s\nguard stderr (tail):\n%s",
			s.release, what, err, vol, v.Spec.NodeID, v.Spec.MigrationNodeID, v.Status.CurrentNodeID, v.Status.State,
			engineSummary(es), replicaSummary(rs), tailLines(s.guard.stderr.String(), 15))
	}
}

func engineSummary(es []longhorn.Engine) string {
	var b []string
	for _, e := range es {
		b = append(b, fmt.Sprintf("%s(node %s active %t %s/%s)", e.Name, e.Spec.NodeID, e.Spec.Active, e.Spec.DesireState, e.Status.CurrentState))
	}
	return strings.Join(b, " ")
}

func replicaSummary(rs []longhorn.Replica) string {
	var b []string
	for _, r := range rs {
		b = append(b, fmt.Sprintf("%s(node %s engine %s active %t %s)", r.Name, r.Spec.NodeID, r.Spec.EngineName, r.Spec.Active, r.Status.CurrentState))
	}
	return strings.Join(b, " ")
}

// injectFaults adds up to two faults of random kinds before a drain's
// requests.
func (s *soak) injectFaults() {
	for n := s.rng.Intn(3); n > 0; n-- {
		f := soakFaults[s.rng.Intn(len(soakFaults))]
		f.Count = 1 + s.rng.Intn(2)
		if _, err := s.lh.InjectFault(f); err != nil {
			s.t.Fatal(err)
		}
	}
}

// collectFaults counts the injected faults' hits by kind and clears them,
// so that none is left for the next drain.
func (s *soak) collectFaults() {
	hits, err := s.lh.Faults()
	if err != nil {
		s.t.Fatal(err)
	}
	seeded := map[int]bool{}
	for _, id := range s.seeded {
		seeded[id] = true
	}
	for _, f := range hits {
		if f.Hits == 0 {
			continue
		}
		if seeded[f.ID] {
			s.res.SeedFaults += f.Hits
			continue
		}
		s.res.Faults[faultKind(f.Fault)] += f.Hits
	}
	s.seeded = nil
	if err := s.lh.ClearFaults(); err != nil {
		s.t.Fatal(err)
	}
}

// violate records a broken invariant; the test fails on it at the end.
func (s *soak) violate(format string, args ...any) {
	s.res.Violations = append(s.res.Violations, fmt.Sprintf(format, args...))
}

// check holds the invariants at one point of the run: no replica deleted
// while active, no directory a replica uses wiped, no data lost.
func (s *soak) check(when string) {
	if l := s.activeDeleted(); len(l) > s.res.ActiveDeleted {
		s.violate("%s: replicas deleted while active: %v", when, l)
		s.res.ActiveDeleted = len(l)
	}
	for _, v := range s.vols {
		_, _, rs := s.state(v)
		for _, w := range s.sim.WipedDirs(v) {
			for _, r := range rs {
				if strings.HasSuffix(w, "/"+r.Spec.DataDirectoryName) && strings.HasPrefix(w, r.Spec.NodeID+":") {
					s.violate("%s: replica %s of %s uses the wiped directory %s", when, r.Name, v, w)
					s.res.Wiped++
				}
			}
		}
		if lost, err := s.sim.DataLost(s.ctx, v); err != nil || lost {
			s.violate("%s: data of %s lost: %v %v", when, v, lost, err)
			s.res.DataLost++
		}
	}
}

var bugEngines = regexp.MustCompile(`BUG: found the second active engine (\S+) besides (\S+)`)

// stuckStates are the two-active states that Longhorn's controller called
// stuck (it logged the BUG error naming one of their engines), by volume,
// and how many two-active states there were in all.
func (s *soak) stuckStates() (map[string][]span, int) {
	bug := map[string]bool{}
	for _, m := range bugEngines.FindAllStringSubmatch(s.lh.Logs(), -1) {
		bug[strings.TrimRight(m[1], ",.:")] = true
		bug[strings.TrimRight(m[2], ",.:")] = true
	}
	intervals := s.engines.intervals()
	stuck := map[string][]span{}
	for _, iv := range intervals {
		for _, en := range iv.engines {
			if bug[en] {
				stuck[iv.vol] = append(stuck[iv.vol], iv)
				break
			}
		}
	}
	return stuck, len(intervals)
}

// danglingLine is Longhorn's sync error for a volume whose engine has no
// replica of its own to start with (noReplicaLine): on 1.4.x, the
// DanglingReplicas a confirm whose delete timed out leaves.
var danglingLine = regexp.MustCompile(`time="([^"]+)"[^\n]*msg="Error syncing Longhorn volume [^/"]+/([^"]+)"[^\n]*` + noReplicaLine)

// danglingStates are the dangling-replica spans Longhorn's controller
// called stuck: it logged during the span that the volume has no replica
// to start with (its log's clock is to the second), by volume.
func (s *soak) danglingStates() map[string][]span {
	logged := map[string][]time.Time{}
	for _, m := range danglingLine.FindAllStringSubmatch(s.lh.Logs(), -1) {
		if at, err := time.Parse(time.RFC3339, m[1]); err == nil {
			logged[m[2]] = append(logged[m[2]], at)
		}
	}
	out := map[string][]span{}
	for _, sp := range s.engines.danglingSpans() {
		if slices.ContainsFunc(logged[sp.vol], func(at time.Time) bool {
			return !at.Before(sp.start.Add(-time.Second)) && (sp.end.IsZero() || !at.After(sp.end.Add(time.Second)))
		}) {
			out[sp.vol] = append(out[sp.vol], sp)
		}
	}
	return out
}

// judgedStates are the states the guard must end, by volume: the stuck
// two-active ones and the stuck dangling ones.
func (s *soak) judgedStates() map[string][]span {
	stuck, _ := s.stuckStates()
	for vol, sps := range s.danglingStates() {
		stuck[vol] = append(stuck[vol], sps...)
	}
	return stuck
}

// guardOutcome is the guard's first `repaired` (or `superseded`) outcome
// for vol at or after start: the one that ends a stuck state begun then.
func guardOutcome(ls []guardLine, vol string, start time.Time) (time.Time, string, bool) {
	for _, o := range outcomesOf(ls, vol) {
		if (o.verb == string(fix.ResultRepaired) || o.verb == string(fix.ResultSuperseded)) && !o.at.Before(start) {
			return o.at, o.verb, true
		}
	}
	return time.Time{}, "", false
}

// awaitGuardOutcomes waits, up to settle + one sync, until every stuck
// state has the guard's outcome: its last repair may still be verifying
// (the wait for Longhorn's clean-up) when the volumes have settled, and a
// guard stopped then reports the repair interrupted, not made. Whatever is
// still missing after the bound is the invariant's to report.
func (s *soak) awaitGuardOutcomes() {
	_ = wait.PollUntilContextTimeout(s.ctx, time.Second, s.cfg.Settle+soakSyncBound, true, func(context.Context) (bool, error) {
		lines := s.guard.stdout.guardLines()
		for vol, ivs := range s.judgedStates() {
			for _, iv := range ivs {
				if _, _, ok := guardOutcome(lines, vol, iv.start); !ok {
					return false, nil
				}
			}
		}
		return true, nil
	})
}

// result judges the run: the two-active states seen, which Longhorn called
// stuck, which the guard repaired and how fast, and every guard write made
// outside a stuck state.
func (s *soak) result() soakResult {
	res := s.res
	stuck, twoActive := s.stuckStates()
	res.TwoActive = twoActive
	dangling := s.danglingStates()
	lines := s.guard.stdout.guardLines()
	for _, kind := range []struct {
		name   string
		states map[string][]span
		n, ok  *int
	}{{"stuck state", stuck, &res.Stuck, &res.Repaired}, {"DanglingReplicas state", dangling, &res.Dangling, &res.DanglingRepaired}} {
		for vol, ivs := range kind.states {
			for _, iv := range ivs {
				*kind.n++
				at, outcome, found := guardOutcome(lines, vol, iv.start)
				switch {
				case !found:
					s.violateOn(&res, "the %s of %s (engines %v) was not repaired by the guard", kind.name, vol, iv.engines)
				case outcome == string(fix.ResultSuperseded):
					*kind.ok++
					res.Superseded++
				default:
					*kind.ok++
					res.RepairTimes = append(res.RepairTimes, at.Sub(iv.start))
				}
				// the state itself must end (the guard's write ends it)
				// within settle + one sync; the verification that follows
				// waits for Longhorn to finish the clean-up
				if iv.end.IsZero() {
					continue
				}
				d := iv.end.Sub(iv.start)
				res.StuckTimes = append(res.StuckTimes, d)
				if d > s.cfg.Settle+soakSyncBound {
					s.violateOn(&res, "the %s of %s (engines %v) lasted %v, past settle + one sync (%v)", kind.name, vol, iv.engines, d.Round(time.Second), s.cfg.Settle+soakSyncBound)
				}
			}
		}
	}
	for vol, sps := range dangling {
		stuck[vol] = append(stuck[vol], sps...)
	}
	// every write of the guard falls in a stuck or dangling state of its
	// volume
	for _, l := range lines {
		if l.outcome {
			continue
		}
		vol := s.volumeOf(l.kind, l.name)
		ok := false
		for _, iv := range stuck[vol] {
			if !l.at.Before(iv.start) && (iv.end.IsZero() || !l.at.After(iv.end.Add(5*time.Second))) {
				ok = true
			}
		}
		if !ok {
			res.GuardWritesNotStuck++
			s.violateOn(&res, "the guard wrote %s %q (%s) while %s was not stuck", l.kind, l.name, l.verb, vol)
		}
	}
	s.checkBackups(&res, lines)
	affected := false
	if v, err := longhorn.ParseVersion(s.release); err == nil {
		affected = v.Affected()
	}
	for _, v := range s.vols {
		w := s.writtenByPlugin(v)
		if len(w) > 0 && (len(stuck[v]) == 0 || !affected) {
			res.GuardWritesNotStuck++
			s.violateOn(&res, "the guard wrote %v of %s, which was never stuck or is on a fixed release", w, v)
		}
	}
	// the seed's fault leaves two active engines on an affected release
	// (TestSeedSequence): a run that hit it and saw nothing stuck judged
	// nothing
	if affected && res.SeedFaults > 0 && res.Stuck == 0 {
		s.violateOn(&res, "the seed's fault was hit %d times on an affected release and no stuck state was seen", res.SeedFaults)
	}
	for _, nc := range res.NotConverged {
		s.violateOn(&res, "did not converge: %s", nc)
	}
	return res
}

// checkBackups checks that the guard backed up every write first, as the
// Job's --backup-to configmap asks: a backup ConfigMap of the written
// object's volume made no later than the write and no earlier than one
// stuck state's bound before it.
func (s *soak) checkBackups(res *soakResult, lines []guardLine) {
	cms, err := s.srv.Client().CoreV1().ConfigMaps(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: fix.LabelManagedBy + "=" + fix.ManagedBy})
	if err != nil {
		s.violateOn(res, "list the guard's backup ConfigMaps: %v", err)
		return
	}
	res.BackupConfigMaps = len(cms.Items)
	made := map[string][]time.Time{}
	for _, cm := range cms.Items {
		v := cm.Labels[fix.LabelVolume]
		made[v] = append(made[v], cm.CreationTimestamp.Time)
	}
	for _, l := range lines {
		if l.outcome {
			continue
		}
		vol := s.volumeOf(l.kind, l.name)
		if !slices.ContainsFunc(made[vol], func(c time.Time) bool {
			return !c.After(l.at) && l.at.Sub(c) <= s.cfg.Settle+soakSyncBound
		}) {
			res.WritesNotBackedUp++
			s.violateOn(res, "the guard wrote %s %q (%s) with no backup ConfigMap of %s made before it", l.kind, l.name, l.verb, vol)
		}
	}
}

// logRecord logs what the judgement read: the two-active spans and the
// guard's stdout, each with its time from the start.
func (s *soak) logRecord() {
	for _, iv := range s.engines.intervals() {
		end := "open"
		if !iv.end.IsZero() {
			end = iv.end.Sub(s.start).Round(100 * time.Millisecond).String()
		}
		s.t.Logf("two active: %s %v from %v to %s", iv.vol, iv.engines, iv.start.Sub(s.start).Round(100*time.Millisecond), end)
	}
	for _, l := range s.guard.stdout.lines() {
		s.t.Logf("guard %v: %s", l.at.Sub(s.start).Round(100*time.Millisecond), l.text)
	}
}

func (s *soak) violateOn(res *soakResult, format string, args ...any) {
	res.Violations = append(res.Violations, fmt.Sprintf(format, args...))
}

// volumeOf maps a written object to its volume: engines and replicas are
// named after it.
func (s *soak) volumeOf(kind, name string) string {
	if kind == "volume" || kind == "volumeattachment" {
		return name
	}
	for _, v := range s.vols {
		if strings.HasPrefix(name, v+"-") {
			return v
		}
	}
	return name
}

// span is a time in which a volume was in one state (two or more active
// engines not being deleted, or dangling replicas), with the engines
// involved.
type span struct {
	vol        string
	engines    []string
	start, end time.Time // end zero: still so
}

// engineWatch follows every engine and replica through informers (a long
// soak outlives a single watch) and records two kinds of spans per volume:
// two or more active engines, and dangling replicas (an active replica
// naming an engine that no longer exists while the volume has another).
type engineWatch struct {
	mu       sync.Mutex
	active   map[string]map[string]bool   // volume → its active engines
	exists   map[string]map[string]bool   // volume → every engine it has
	replicas map[string]map[string]string // volume → active replica → its engine
	two      spans
	dangling spans
}

func (e *env) watchEngines() *engineWatch {
	w := &engineWatch{active: map[string]map[string]bool{}, exists: map[string]map[string]bool{}, replicas: map[string]map[string]string{},
		two: spans{open: map[string]*span{}}, dangling: spans{open: map[string]*span{}}}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(e.c.Dynamic(), 0, e.ns, nil)
	watch := func(r longhorn.Resource, update func(u *unstructured.Unstructured, gone bool)) cache.SharedIndexInformer {
		inf := f.ForResource(r.GVR()).Informer()
		on := func(obj any, gone bool) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj, gone = d.Obj, true
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				update(u, gone)
			}
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { on(obj, false) },
			UpdateFunc: func(_, obj any) { on(obj, false) },
			DeleteFunc: func(obj any) { on(obj, true) },
		}); err != nil {
			e.t.Fatal(err)
		}
		return inf
	}
	engines := watch(longhorn.Engines, func(u *unstructured.Unstructured, gone bool) {
		var en longhorn.Engine
		if testenv.FromUnstructured(u, &en) == nil {
			w.setEngine(en.Spec.VolumeName, en.Name, !gone, !gone && en.Spec.Active && en.DeletionTimestamp == nil)
		}
	})
	replicas := watch(longhorn.Replicas, func(u *unstructured.Unstructured, gone bool) {
		var r longhorn.Replica
		if testenv.FromUnstructured(u, &r) == nil {
			live := !gone && r.Spec.Active && r.DeletionTimestamp == nil
			w.setReplica(r.Spec.VolumeName, r.Name, r.Spec.EngineName, live)
		}
	})
	f.Start(e.ctx.Done())
	if !cache.WaitForCacheSync(e.ctx.Done(), engines.HasSynced, replicas.HasSynced) {
		e.t.Fatal("the engine and replica informers did not sync")
	}
	return w
}

func (w *engineWatch) setEngine(vol, engine string, exists, active bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	setIn(w.exists, vol, engine, exists)
	setIn(w.active, vol, engine, active)
	var names []string
	for name := range w.active[vol] {
		names = append(names, name)
	}
	sort.Strings(names)
	w.two.set(vol, names, len(names) >= 2)
	w.updateDangling(vol)
}

func (w *engineWatch) setReplica(vol, replica, engine string, live bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.replicas[vol] == nil {
		w.replicas[vol] = map[string]string{}
	}
	if live {
		w.replicas[vol][replica] = engine
	} else {
		delete(w.replicas[vol], replica)
	}
	w.updateDangling(vol)
}

func setIn(m map[string]map[string]bool, vol, name string, on bool) {
	if m[vol] == nil {
		m[vol] = map[string]bool{}
	}
	if on {
		m[vol][name] = true
	} else {
		delete(m[vol], name)
	}
}

// updateDangling opens or closes vol's dangling span, naming the engines
// the dangling replicas point at.
func (w *engineWatch) updateDangling(vol string) {
	var gone []string
	if len(w.exists[vol]) > 0 {
		for _, en := range w.replicas[vol] {
			if !w.exists[vol][en] && !slices.Contains(gone, en) {
				gone = append(gone, en)
			}
		}
	}
	sort.Strings(gone)
	w.dangling.set(vol, gone, len(gone) > 0)
}

// spans records per volume the spans in which a condition held.
type spans struct {
	open map[string]*span
	done []span
}

// set opens vol's span when on (or adds names to the open one) and closes
// it when not.
func (sp *spans) set(vol string, names []string, on bool) {
	iv := sp.open[vol]
	switch {
	case on && iv == nil:
		sp.open[vol] = &span{vol: vol, engines: names, start: time.Now()}
	case on:
		for _, name := range names {
			if !slices.Contains(iv.engines, name) {
				iv.engines = append(iv.engines, name)
			}
		}
	case iv != nil:
		iv.end = time.Now()
		sp.done = append(sp.done, *iv)
		delete(sp.open, vol)
	}
}

func (sp *spans) all() []span {
	out := append([]span(nil), sp.done...)
	for _, iv := range sp.open {
		out = append(out, *iv)
	}
	return out
}

// danglingSpans are every dangling span, ended or not.
func (w *engineWatch) danglingSpans() []span {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dangling.all()
}

// intervals are every two-active span, ended or not.
func (w *engineWatch) intervals() []span {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.two.all()
}
