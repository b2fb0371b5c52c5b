package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv/clitest"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// Next is what an operator or Longhorn may do after fix stopped part way.
type Next string

const (
	NextNothing   Next = "nothing"
	NextKBDelete  Next = "kb-delete" // the KB's delete of the stale engine
	NextHarvester Next = "harvester" // Harvester's spec.active=false patch of the stale engine
	NextMigrate   Next = "migrate"   // a migration request to a third node
	NextFixAgain  Next = "fix-again" // fix run again at once
	copyOracle         = "o"
	copyFix            = "f"
)

// Nexts are every next step check (c) applies.
var Nexts = []Next{NextNothing, NextKBDelete, NextHarvester, NextMigrate, NextFixAgain}

// Options bound a batch.
type Options struct {
	// Quiet is how long nothing may change before Longhorn is taken to be
	// done; Max bounds the wait. A volume whose objects have kept changing
	// for Churn without a quiet gap is not waited for past that (World.Quiesce).
	Quiet, Churn, Max time.Duration
	// Interrupted runs check (c); without it only (a) and (b) run.
	Interrupted bool
	// AfterLast also stops a one-write fix after that write (the repair
	// made, not verified) before each next step, which is otherwise never
	// stopped: the fixtures' replay sets it. Longer repairs are stopped
	// after every write but the last already.
	AfterLast bool
	// FixTimeout bounds each verified fix run of check (c).
	FixTimeout time.Duration
	// Logs receives the controllers' log (nil: dropped).
	Logs io.Writer
	// Workers run fix at once.
	Workers int
	// SimOracle has lhsim play Longhorn's controllers too (its full mode)
	// instead of running the release's own.
	SimOracle bool
	// Conflicts answers 409 Conflict to the controllers' first update of
	// each replica of the whole-fix copies (check b), as a busy API server
	// answers a write made from a stale cache: a repair that leaves a
	// replica for Longhorn to switch inactive and delete in one pass loses
	// its directory on 1.12 (longhorn.Version.ReplicaDeleteIgnoresConflict).
	// The faults go in as the controllers report ready, before their first
	// sync as a rule. Real controllers only.
	Conflicts bool
	// Trace, when set, receives where a batch's time went: each phase and
	// whether Longhorn went quiet before Max (a batch that always waits
	// out Max is bound by a volume that never settles, not by the work).
	Trace func(format string, args ...any)
}

func (o *Options) defaults() {
	if o.Quiet <= 0 {
		o.Quiet = 6 * time.Second
	}
	if o.Max <= 0 {
		o.Max = 2 * time.Minute
	}
	if o.Churn <= 0 {
		o.Churn = 45 * time.Second
	}
	if o.FixTimeout <= 0 {
		o.FixTimeout = 90 * time.Second
	}
	if o.Workers <= 0 {
		o.Workers = 12
	}
	if o.Trace == nil {
		o.Trace = func(string, ...any) {}
	}
}

// Case is one generated state to explore, named by where it came from.
type Case struct {
	Name  string `json:"name"`
	State State  `json:"state"`
}

// Result is what the explorer found on one case.
type Result struct {
	Case    Case            `json:"case"`
	Verdict Verdict         `json:"verdict"`
	Finding string          `json:"finding,omitempty"`
	Oracle  Observed        `json:"oracle"`
	Fix     *FixRun         `json:"fix,omitempty"`
	Stops   []StopRun       `json:"stops,omitempty"`
	Found   []Disagreement  `json:"disagreements,omitempty"`
	Writes  int             `json:"writes,omitempty"`
	finding *detect.Finding `json:"-"`
}

// FixRun is check (b) on one case.
type FixRun struct {
	Code     int      `json:"code"`
	Output   string   `json:"output,omitempty"`
	Observed Observed `json:"observed"`
	// Conflicts is how many of Longhorn's writes of the volume's replicas
	// were answered 409 (Options.Conflicts).
	Conflicts int `json:"conflicts,omitempty"`
}

// StopRun is one run of check (c): fix stopped after write After, then
// Next, then Longhorn, then fix again.
type StopRun struct {
	After    int      `json:"after"`
	Next     Next     `json:"next"`
	Rerun    int      `json:"rerunCode"`
	Output   string   `json:"output,omitempty"`
	Observed Observed `json:"observed"`
}

type copyOf struct {
	caseIdx int
	vol     string
	after   int
	next    Next
}

// Batch explores cases on one world of the release: writes every case (and
// its repair copies), runs scan and fix while nothing of Longhorn runs,
// starts Longhorn, waits until it is quiet, and judges every volume.
func Batch(ctx context.Context, c *testcluster.Cluster, release string, cases []Case, o Options) ([]Result, error) {
	o.defaults()
	w, err := NewWorld(ctx, c, release, o.Logs, o.SimOracle)
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	phase := time.Now()
	lap := func(what string, args ...any) {
		o.Trace("batch of %d: %s in %s", len(cases), fmt.Sprintf(what, args...), time.Since(phase).Round(100*time.Millisecond))
		phase = time.Now()
	}
	client, err := readstate.NewClient(c.RESTConfig())
	if err != nil {
		return nil, err
	}
	results := make([]Result, len(cases))
	vol := func(i int, kind string) string { return fmt.Sprintf("v%03d-%s", i, kind) }
	for i, cs := range cases {
		results[i].Case = cs
		if why := cs.State.Valid(); why != "" {
			return nil, fmt.Errorf("explore: case %s: %s", cs.Name, why)
		}
		if err := w.Write(ctx, cs.State, vol(i, copyOracle)); err != nil {
			return nil, err
		}
	}
	// check (a): scan's verdict on the states as written
	res, err := scanNS(ctx, client, w.NS)
	if err != nil {
		return nil, err
	}
	var copies []copyOf
	for i := range cases {
		f := res[vol(i, copyOracle)]
		results[i].finding = f
		results[i].Verdict = VerdictOf(f)
		if f != nil {
			results[i].Finding = fmt.Sprintf("%s/%s/%s", f.Type, f.Severity, f.Action)
		}
		if f == nil || !f.Action.Writes() || f.Refused() {
			continue
		}
		writes := len(f.ReplicaChanges) + len(f.Stale)
		switch f.Action {
		case detect.ActionSetReplicas:
			writes = len(f.ReplicaChanges)
		case detect.ActionClearMigrationNode:
			writes = 1 // the volume's status, nothing else
		}
		results[i].Writes = writes
		copies = append(copies, copyOf{caseIdx: i, vol: vol(i, copyFix)})
		if o.Interrupted {
			last := writes - 1
			if o.AfterLast && writes == 1 {
				last = 1
			}
			for k := 1; k <= last; k++ {
				for _, n := range Nexts {
					copies = append(copies, copyOf{caseIdx: i, vol: vol(i, fmt.Sprintf("s%d-%s", k, n)), after: k, next: n})
				}
			}
		}
	}
	for _, cp := range copies {
		if err := w.Write(ctx, cases[cp.caseIdx].State, cp.vol); err != nil {
			return nil, err
		}
	}
	// checks (b) and (c): fix while Longhorn is down, then the next step
	outputs := make([]fixOut, len(copies))
	var firstErr error
	var mu sync.Mutex
	parallel(len(copies), o.Workers, func(j int) {
		cp := copies[j]
		out := runFix(ctx, w, cp.vol, cp.after)
		if cp.after > 0 {
			if err := applyNext(ctx, w, cp, cases[cp.caseIdx].State); err != nil {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		}
		outputs[j] = out
	})
	if firstErr != nil {
		return nil, firstErr
	}
	lap("states written, scanned and %d copies repaired", len(copies))
	conflicted := map[string][]string{} // whole-fix copy → its replicas
	if o.Conflicts && !o.SimOracle {
		for _, cp := range copies {
			if cp.after != 0 {
				continue
			}
			_, _, rs, err := w.State(ctx, cp.vol)
			if err != nil {
				return nil, err
			}
			for _, r := range rs {
				conflicted[cp.vol] = append(conflicted[cp.vol], r.Name)
			}
		}
	}
	if err := w.Start(ctx); err != nil {
		return nil, err
	}
	faultIDs, err := w.conflictOn(conflicted)
	if err != nil {
		return nil, err
	}
	quiet, busy := w.Quiesce(ctx, o.Quiet, o.Churn, o.Max)
	lap("Longhorn ran (quiet: %t%s)", quiet, busyNote(busy))
	// check (c): fix run again, on the running Longhorn
	reruns := make([]fixOut, len(copies))
	stopIdx := []int{}
	for j, cp := range copies {
		if cp.after > 0 {
			stopIdx = append(stopIdx, j)
		}
	}
	if len(stopIdx) > 0 {
		parallel(len(stopIdx), o.Workers, func(k int) {
			j := stopIdx[k]
			reruns[j] = runVerifiedFix(ctx, w, copies[j].vol, o.FixTimeout)
		})
		lap("%d verified fix runs", len(stopIdx))
		quiet, busy = w.Quiesce(ctx, o.Quiet, o.Churn, o.Max)
		lap("Longhorn ran again (quiet: %t%s)", quiet, busyNote(busy))
	}
	st, err := readstate.Load(ctx, client, readstate.LoadOptions{Namespace: w.NS})
	if err != nil {
		return nil, err
	}
	observe := func(name string) Observed {
		v, es, rs := st.VolumeState(name)
		return Judge(v, es, rs, longhorn.Named(st.VolumeAttachments, name).CSITicketNodes(), w.lostDirs(name, rs), w.activeDeleted(name))
	}
	for i := range cases {
		r := &results[i]
		r.Oracle = observe(vol(i, copyOracle))
		if d := judgeVerdict(r.Verdict, r.Oracle); d != nil {
			r.Found = append(r.Found, *d)
		}
	}
	for j, cp := range copies {
		r := &results[cp.caseIdx]
		obs := observe(cp.vol)
		if cp.after == 0 {
			r.Fix = &FixRun{Code: outputs[j].code, Output: outputs[j].text, Observed: obs}
			for _, id := range faultIDs[cp.vol] {
				r.Fix.Conflicts += w.lh.FaultHits(id)
			}
			switch {
			case obs.Outcome == OutcomeLost:
				r.Found = append(r.Found, Disagreement{KindFixLost, fmt.Sprintf("fix exit %d; wiped %v, active replicas deleted %v; end: %s", outputs[j].code, obs.Wiped, obs.ActiveDeleted, obs.End)})
			case outputs[j].code == 0 && obs.Outcome == OutcomeStuck:
				r.Found = append(r.Found, Disagreement{KindFixNotConverged, fmt.Sprintf("fix exit 0; Longhorn did not converge; end: %s", obs.End)})
			}
			continue
		}
		run := StopRun{After: cp.after, Next: cp.next, Rerun: reruns[j].code, Output: reruns[j].text, Observed: obs}
		r.Stops = append(r.Stops, run)
		switch {
		case obs.Outcome == OutcomeLost:
			r.Found = append(r.Found, Disagreement{KindInterruptedLost, fmt.Sprintf("fix stopped after write %d, then %s: wiped %v, active replicas deleted %v; end: %s", cp.after, cp.next, obs.Wiped, obs.ActiveDeleted, obs.End)})
		case reruns[j].code != 0:
			r.Found = append(r.Found, Disagreement{KindRerunIncomplete, fmt.Sprintf("fix stopped after write %d, then %s: fix run again exited %d; end: %s", cp.after, cp.next, reruns[j].code, obs.End)})
		}
	}
	return results, nil
}

// busyNote names the volumes still changing when Longhorn was not quiet.
func busyNote(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	if len(keys) > 8 {
		keys = append(keys[:8:8], fmt.Sprintf("… %d more", len(keys)-8))
	}
	return "; still changing: " + strings.Join(keys, ", ")
}

// scanNS is scan: the namespace read as scan reads it, classified.
func scanNS(ctx context.Context, c *readstate.Client, ns string) (map[string]*detect.Finding, error) {
	st, err := readstate.Load(ctx, c, readstate.LoadOptions{Namespace: ns})
	if err != nil {
		return nil, err
	}
	res := detect.Classify(st, detect.Options{})
	out := map[string]*detect.Finding{}
	for i := range res.Findings {
		f := &res.Findings[i]
		if _, isVolume := out[f.Volume]; !isVolume && f.Type != detect.TypeOrphanEngine && f.Type != detect.TypeOrphanEngineProcess {
			out[f.Volume] = f
		}
	}
	return out, nil
}

type fixOut struct {
	code int
	text string
}

// runFix runs `fix VOL --yes --wait=false` while Longhorn is down; with
// after > 0 the run is stopped (its context cancelled) right after its
// after-th write, as a kill or a lost connection would stop it.
func runFix(ctx context.Context, w *World, vol string, after int) fixOut {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	hooks := cmd.Hooks{Fix: fix.Hooks{AfterWrite: func(string) {
		n++
		if after > 0 && n == after {
			cancel()
		}
	}}}
	dir, err := os.MkdirTemp("", "explore-fix-")
	if err != nil {
		return fixOut{code: -1, text: err.Error()}
	}
	defer os.RemoveAll(dir)
	r := clitest.New(nil, w.Kubeconfig()).Hooks(hooks).Run(runCtx, "fix", vol, "-n", w.NS, "--yes", "--wait=false", "--backup-dir", dir)
	return fixOut{code: r.Code, text: r.String()}
}

// runVerifiedFix runs `fix VOL --yes` with its wait and verification.
func runVerifiedFix(ctx context.Context, w *World, vol string, timeout time.Duration) fixOut {
	dir, err := os.MkdirTemp("", "explore-fix-")
	if err != nil {
		return fixOut{code: -1, text: err.Error()}
	}
	defer os.RemoveAll(dir)
	r := clitest.New(nil, w.Kubeconfig()).Run(ctx, "fix", vol, "-n", w.NS, "--yes", "--timeout", timeout.String(), "--backup-dir", dir)
	return fixOut{code: r.Code, text: r.String()}
}

// applyNext does what an operator or Longhorn does next to a copy whose
// fix was stopped.
func applyNext(ctx context.Context, w *World, cp copyOf, s State) error {
	ver := longhorn.MustParseVersion(s.Release)
	dyn := w.c.Dynamic()
	stale := staleEngines(s, cp.vol)
	patch := func(r longhorn.Resource, name string, body string) error {
		_, err := dyn.Resource(r.GVR()).Namespace(w.NS).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	switch cp.next {
	case NextNothing:
	case NextKBDelete:
		for _, e := range stale {
			if err := w.delete(ctx, longhorn.Engines, e); err != nil && !strings.Contains(err.Error(), "not found") {
				return err
			}
		}
	case NextHarvester:
		for _, e := range stale {
			if err := patch(longhorn.Engines, e, `{"spec":{"active":false}}`); err != nil {
				return fmt.Errorf("explore: harvester patch %s: %w", e, err)
			}
		}
	case NextMigrate:
		target := thirdNode(s)
		if ver.HasVolumeAttachments() {
			id := longhorn.CSITicketID(cp.vol, target)
			t, _ := json.Marshal(map[string]any{"spec": map[string]any{"attachmentTickets": map[string]any{id: map[string]any{
				"id": id, "type": longhorn.AttacherTypeCSI, "nodeID": target, "generation": 0,
				"parameters": map[string]any{"disableFrontend": "false"}}}}})
			return patch(longhorn.VolumeAttachments, cp.vol, string(t))
		}
		return patch(longhorn.Volumes, cp.vol, `{"spec":{"migrationNodeID":"`+target+`"}}`)
	case NextFixAgain:
		if out := runFix(ctx, w, cp.vol, 0); out.code != 0 {
			// judged by the verified run after Longhorn started
			return nil
		}
	}
	return nil
}

// staleEngines are the engines of copy vol that scan calls stale on the
// generated state: the active ones not on status.currentNodeID.
func staleEngines(s State, vol string) []string {
	var out []string
	for i, e := range s.Engines {
		if e.Active && !e.Deleting && e.Node != s.CurrentNodeID {
			out = append(out, engineName(s.Release, vol, i))
		}
	}
	return out
}

// thirdNode is a node that is neither spec.nodeID nor the current node.
func thirdNode(s State) string {
	for _, n := range []string{Nodes[2], Nodes[0], Nodes[1]} {
		if n != s.NodeID && n != s.CurrentNodeID {
			return n
		}
	}
	return Nodes[2]
}

// parallel runs fn(0..n-1) on workers goroutines.
func parallel(n, workers int, fn func(int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				fn(j)
			}
		}()
	}
	for j := 0; j < n; j++ {
		work <- j
	}
	close(work)
	wg.Wait()
}
