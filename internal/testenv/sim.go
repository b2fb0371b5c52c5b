package testenv

// Env gives a test its own simulated Longhorn: a simulator of one release in
// a namespace of its own on the shared test API server, with nodes node-a
// and node-b, and waits that fail the test with the last state seen. Every
// package that drives the simulator uses it.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

var nsSeq atomic.Int64

// Namespace returns a namespace name no other test of this process uses,
// prefix-N, for tests that run side by side on one API server.
func Namespace(prefix string) string { return fmt.Sprintf("%s-%d", prefix, nsSeq.Add(1)) }

// Env is one test's simulator.
type Env struct {
	T   *testing.T
	Ctx context.Context
	Sim *lhsim.Sim
	NS  string
	// Wait bounds each WaitFor and Await.
	Wait time.Duration

	dyn dynamic.Interface
}

// StartSim runs a simulator of version in namespace ns for at most life,
// with nodes node-a and node-b (see Start).
func StartSim(t *testing.T, cfg *rest.Config, ns, version string, life, wait time.Duration) *Env {
	t.Helper()
	return Start(t, cfg, lhsim.Options{Namespace: ns, Version: version}, life, wait, NodeA, NodeB)
}

// Start runs a simulator with opts (its Logf aside) for at most life, with
// the given nodes, stops it when the test ends, and prints its log if the
// test failed (or streams it when LHSIM_LOGS=1).
func Start(t *testing.T, cfg *rest.Config, opts lhsim.Options, life, wait time.Duration, nodes ...string) *Env {
	t.Helper()
	var logf func(string, ...any)
	if os.Getenv("LHSIM_LOGS") == "1" {
		logf = t.Logf
	}
	ns, version := opts.Namespace, opts.Version
	opts.Logf = logf
	s, err := lhsim.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), life)
	if err := s.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		cancel()
		if t.Failed() && logf == nil {
			t.Logf("simulator log (%s, Longhorn %s):\n%s", ns, version, strings.Join(s.Logs(""), "\n"))
		}
	})
	for _, n := range nodes {
		if err := s.AddNode(ctx, n, lhsim.NodeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return &Env{T: t, Ctx: ctx, Sim: s, NS: ns, Wait: wait, dyn: dyn}
}

// WaitFor waits until cond holds for vol, or fails the test saying what.
func (e *Env) WaitFor(what, vol string, cond func(*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) bool) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(e.Ctx, e.Wait)
	defer cancel()
	if err := e.Sim.WaitFor(ctx, vol, cond); err != nil {
		e.T.Fatalf("%s: %v", what, err)
	}
}

// Await waits until cond returns true, or fails the test saying what.
func (e *Env) Await(what string, cond func() bool) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(e.Ctx, e.Wait)
	defer cancel()
	if err := e.Sim.Await(ctx, cond); err != nil {
		e.T.Fatalf("%s: %v", what, err)
	}
}

// ExpectNoDataLoss fails the test when the simulator wiped a data
// directory of vol or holds its data lost.
func (e *Env) ExpectNoDataLoss(vol string) {
	e.T.Helper()
	if w := e.Sim.WipedDirs(vol); len(w) > 0 {
		e.T.Errorf("volume %s: data directories wiped: %v", vol, w)
	}
	lost, err := e.Sim.DataLost(e.Ctx, vol)
	if err != nil {
		e.T.Fatal(err)
	}
	if lost {
		v, es, rs := e.State(vol)
		e.T.Errorf("volume %s lost its data:\n%s", vol, lhsim.Describe(v, es, rs))
	}
}

// ExpectConverged waits for what a good confirm or repair leaves: vol
// settled on node with engine alone and two replicas, then checks that no
// data was lost and waits for Longhorn's sync errors to stop.
func (e *Env) ExpectConverged(vol, node, engine string) {
	e.T.Helper()
	e.WaitFor("settled on "+node, vol, Settled(node))
	e.WaitFor("only "+engine+" and two replicas left", vol, func(_ *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool {
		return len(es) == 1 && es[0].Name == engine && len(rs) == 2
	})
	e.ExpectNoDataLoss(vol)
	e.Await("sync errors stop", func() bool { return e.Sim.LastSyncError(vol) == "" })
}

// State reads vol, its engines and replicas live, or fails the test.
func (e *Env) State(vol string) (*longhorn.Volume, []longhorn.Engine, []longhorn.Replica) {
	e.T.Helper()
	v, es, rs, err := e.Sim.State(e.Ctx, vol)
	if err != nil {
		e.T.Fatal(err)
	}
	return v, es, rs
}
