// Command longhorn-sim starts a simulated Longhorn cluster — a real
// Kubernetes API server with Longhorn's CRDs and a simulator of Longhorn's
// controllers, all in this process on 127.0.0.1 — with named scenarios, so
// the plugin can be tried without a cluster.
//
//	longhorn-sim serve [--scenario NAME ...]   serve until Ctrl-C
//	longhorn-sim demo --plugin PATH            build the scenarios, run the plugin against them, stop
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/lhsim"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// Each simulated namespace runs its own Longhorn release, so one cluster can
// show an affected 1.4 and an affected 1.5 side by side.
var namespaces = []struct{ ns, version string }{
	{"longhorn-system", "v1.4.3"},
	{"longhorn-151", "v1.5.1"},
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	scenarios  multi
	plugin     string
	kubeconfig string
	simLog     bool
	seed       int
	ready      string
}

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, strings.Split(s, ",")...); return nil }

func run(args []string) error {
	if len(args) == 0 || (args[0] != "serve" && args[0] != "demo") {
		return fmt.Errorf("usage: longhorn-sim serve|demo [flags] (scenarios: %s)", strings.Join(testenv.ScenarioNames(), ", "))
	}
	mode := args[0]
	var o options
	fs := flag.NewFlagSet("longhorn-sim "+mode, flag.ContinueOnError)
	fs.Var(&o.scenarios, "scenario", "scenario to build (repeatable; default all): "+strings.Join(testenv.ScenarioNames(), ", "))
	fs.StringVar(&o.plugin, "plugin", "bin/kubectl-longhorn_engines", "the plugin binary the demo runs")
	fs.StringVar(&o.kubeconfig, "kubeconfig-out", "", "also copy the kubeconfig here")
	fs.BoolVar(&o.simLog, "sim-log", false, "print the simulated longhorn-manager log")
	fs.IntVar(&o.seed, "seed-volumes", 0, "serve only: instead of the scenarios, seed this many volumes (3 replicas and a VolumeAttachment each, 1 in 100 with two active engines) in namespace "+testenv.BenchNamespace+" for benchmarks")
	fs.StringVar(&o.ready, "ready-file", "", "serve only: create this file once the cluster is ready")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	scenarios, err := testenv.SelectScenarios(o.scenarios)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	c, err := testcluster.Start(ctx, testcluster.Options{})
	if err != nil {
		return err
	}
	defer c.Stop()
	note("API server with Longhorn CRDs up at %s in %s", c.Host(), time.Since(start).Round(time.Millisecond))

	if o.seed > 0 {
		if mode != "serve" {
			return fmt.Errorf("--seed-volumes goes with serve")
		}
		t := time.Now()
		create := func(ctx context.Context, u *unstructured.Unstructured) error {
			_, err := c.Create(ctx, u)
			return err
		}
		if err := testenv.Seed(ctx, create, testenv.BenchNamespace, testenv.SeedOptions{Volumes: o.seed}); err != nil {
			return err
		}
		note("seeded %d volumes in %s in %s", o.seed, testenv.BenchNamespace, time.Since(t).Round(time.Millisecond))
		namespaces = nil
	}
	for _, n := range namespaces {
		logf := func(string, ...any) {}
		if o.simLog {
			prefix := "[" + n.ns + "] "
			logf = func(f string, a ...any) { fmt.Fprintf(os.Stderr, prefix+f+"\n", a...) }
		}
		sim, err := lhsim.New(c.RESTConfig(), lhsim.Options{Namespace: n.ns, Version: n.version, Logf: logf})
		if err != nil {
			return err
		}
		if err := sim.Start(ctx); err != nil {
			return err
		}
		defer sim.Stop()
		if err := testenv.AddNodes(ctx, sim); err != nil {
			return err
		}
		env := &testenv.SimCluster{Sim: sim, Dynamic: c.Dynamic()}
		for _, sc := range scenarios {
			bctx, cancel := context.WithTimeout(ctx, time.Minute)
			err := testenv.Reach(bctx, env, sc, "")
			cancel()
			if err != nil {
				return fmt.Errorf("%s (Longhorn %s): %w", n.ns, n.version, err)
			}
			note("%-16s %-20s %s", n.ns, sc.Name, sc.Description)
		}
	}
	kc := c.KubeconfigPath()
	if o.kubeconfig != "" {
		if err := copyFile(kc, o.kubeconfig); err != nil {
			return err
		}
		kc = o.kubeconfig
	}
	if mode == "demo" {
		return runDemo(ctx, o.plugin, kc)
	}
	if o.ready != "" {
		if err := os.WriteFile(o.ready, []byte(kc+"\n"), 0o644); err != nil {
			return err
		}
	}
	note("")
	note("Simulated cluster ready. In another shell:")
	note("  export KUBECONFIG=%s", kc)
	note("  export PATH=%s:$PATH   # so kubectl finds kubectl-longhorn_engines", absDir(o.plugin))
	note("  kubectl longhorn-engines scan                      # Longhorn v1.4.3 in longhorn-system")
	note("  kubectl longhorn-engines scan -n longhorn-151      # Longhorn v1.5.1")
	note("  kubectl get engines.longhorn.io -n longhorn-system")
	note("Serving until Ctrl-C.")
	<-ctx.Done()
	note("stopping")
	return nil
}

// runDemo shows the main job: scan both namespaces, describe the volume no
// repair is safe for, preview and apply the repair of the stuck volume, scan
// again.
func runDemo(ctx context.Context, plugin, kubeconfig string) error {
	if _, err := os.Stat(plugin); err != nil {
		return fmt.Errorf("plugin binary %s: %w (run make build)", plugin, err)
	}
	backups, err := os.MkdirTemp("", "longhorn-engines-demo-")
	if err != nil {
		return err
	}
	steps := [][]string{
		{"scan"},
		{"scan", "-n", "longhorn-151", "-o", "wide"},
		{"describe", "issue-4827"},
		{"fix", "two-active-engines", "--dry-run=client"},
		{"fix", "two-active-engines", "--yes", "--timeout", "1m", "--backup-dir", filepath.Join(backups, "fix")},
		{"scan", "two-active-engines"},
	}
	for _, args := range steps {
		fmt.Printf("\n$ kubectl longhorn-engines %s\n", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, plugin, append(args, "--kubeconfig", kubeconfig)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			fmt.Printf("(exit %d)\n", ee.ExitCode())
		case err != nil:
			return err
		}
	}
	return nil
}

func note(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }

func absDir(p string) string {
	a, err := filepath.Abs(filepath.Dir(p))
	if err != nil {
		return filepath.Dir(p)
	}
	return a
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
