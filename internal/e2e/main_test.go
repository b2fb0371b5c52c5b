// Package e2e tests the plugin the way operators run it: the binary built
// with the release's ldflags, and the completion shim, on a temporary PATH,
// driven through the real kubectl (plugin dispatch, `kubectl plugin list`,
// `kubectl __complete`) against Kubernetes' own kube-apiserver
// (internal/kubeserver) with Longhorn's CRDs, whose RBAC authorizer decides
// every request of a test user. E2E_PLUGIN names another plugin binary to
// test instead of building this tree's.
package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/kubeserver"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

const (
	// kubectlPath is the machine's kubectl (1.26+ runs completion shims).
	kubectlPath = "/usr/bin/kubectl"
	pluginName  = "kubectl-longhorn_engines"
	shimName    = "kubectl_complete-longhorn_engines"
)

// The values the release ldflags get here, to see them come out of
// `version`.
var buildValues = map[string]string{
	"Version":    "0.0.0-e2e",
	"Commit":     "e2e0123456789abcdef",
	"CommitDate": "2026-01-02T03:04:05Z",
}

var (
	cluster *kubeserver.Server
	binDir  string // holds the plugin and the shim, and nothing else
	work    string // scratch space: HOME, kubeconfigs
	// skipReason is set when the suite cannot run here.
	skipReason string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	switch {
	case testing.Short():
		skipReason = "-short: end-to-end tests build the plugin and start an API server"
		return m.Run()
	case !executable(kubectlPath):
		skipReason = kubectlPath + " not found: end-to-end tests drive the real kubectl"
		return m.Run()
	}
	tmp, err := os.MkdirTemp("", "lhe-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	binDir, work = filepath.Join(tmp, "bin"), filepath.Join(tmp, "work")
	for _, d := range []string{binDir, work, filepath.Join(work, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
	}
	t0 := time.Now()
	if err := installPlugin(binDir); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if os.Getenv("E2E_LOGS") == "1" {
		fmt.Fprintf(os.Stderr, "e2e: plugin built in %v\n", time.Since(t0).Round(time.Millisecond))
	}
	c, err := kubeserver.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer c.Stop()
	cluster = c
	return m.Run()
}

// moduleRoot is where go test runs this package from, two levels down.
const moduleRoot = "../.."

// installPlugin puts the plugin and the completion shim in dir: the plugin
// built from this tree, or the binary E2E_PLUGIN names (a release's, or an
// older commit's, to see which of today's tests fail on it).
func installPlugin(dir string) error {
	bin := os.Getenv("E2E_PLUGIN")
	if bin == "" {
		return buildPlugin(dir)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("E2E_PLUGIN: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, pluginName), b, 0o755); err != nil {
		return err
	}
	return installShim(dir)
}

// buildPlugin builds the plugin as the release does (main package, name,
// flags and ldflags from .goreleaser.yaml, goreleaser's template values
// replaced by buildValues) and puts the completion shim beside it.
func buildPlugin(dir string) error {
	rb, err := testenv.ReadReleaseBuild()
	if err != nil {
		return err
	}
	if rb.Binary != pluginName || rb.Main != "./cmd/kubectl-longhorn-engines" {
		return fmt.Errorf(".goreleaser.yaml builds %q from %q; kubectl needs %q (from ./cmd/kubectl-longhorn-engines)", rb.Binary, rb.Main, pluginName)
	}
	var ldflags []string
	for _, f := range rb.Ldflags {
		t, err := template.New("ldflags").Option("missingkey=error").Parse(f)
		if err != nil {
			return fmt.Errorf(".goreleaser.yaml ldflags %q: %w", f, err)
		}
		var b strings.Builder
		if err := t.Execute(&b, buildValues); err != nil {
			return fmt.Errorf(".goreleaser.yaml ldflags %q: %w (teach buildValues the new key)", f, err)
		}
		ldflags = append(ldflags, b.String())
	}
	if err := testenv.BuildPlugin(context.Background(), filepath.Join(dir, pluginName), ldflags...); err != nil {
		return err
	}
	return installShim(dir)
}

// installShim puts this tree's completion shim in dir.
func installShim(dir string) error {
	shim, err := os.ReadFile(filepath.Join(moduleRoot, "hack", shimName))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, shimName), shim, 0o755)
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// result is one kubectl run.
type result struct {
	Stdout, Stderr string
	Code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
}

// begin skips when the suite cannot run and otherwise empties the cluster.
func begin(t *testing.T) context.Context {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	if err := cluster.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	return ctx
}

// kubectl runs the real kubectl as an operator would: only the plugin's
// folder and the system's on PATH, the test cluster's kubeconfig in
// KUBECONFIG, a private HOME (no kubectl cache or config of the machine's
// user), no terminal.
func kubectl(ctx context.Context, t *testing.T, args ...string) result {
	t.Helper()
	return kubectlAs(ctx, t, cluster.KubeconfigPath(), args...)
}

// kubectlAs is kubectl with another kubeconfig (another user, or a broken
// server).
func kubectlAs(ctx context.Context, t *testing.T, kubeconfig string, args ...string) result {
	t.Helper()
	return kubectlWith(ctx, t, binDir, kubeconfig, args...)
}

// kubectlWith is kubectlAs with another folder in place of binDir on PATH.
func kubectlWith(ctx context.Context, t *testing.T, pathDir, kubeconfig string, args ...string) result {
	t.Helper()
	cmd := exec.CommandContext(ctx, kubectlPath, args...)
	cmd.Env = []string{
		"PATH=" + pathDir + ":/usr/bin:/bin",
		"KUBECONFIG=" + kubeconfig,
		"HOME=" + filepath.Join(work, "home"),
		"NO_COLOR=1",
	}
	cmd.Dir = t.TempDir() // fix writes its backups to the working directory
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{Stdout: out.String(), Stderr: errOut.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
	}
	return r
}
