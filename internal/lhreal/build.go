package lhreal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

func moduleDir(release string) string {
	return filepath.Join(testenv.ModuleRoot(), "test", "longhorn", release)
}

// ReleasesEnv selects the releases of a test run: unset or empty, the
// sample of make test (Sample); "all", every module (make test-releases);
// or a comma-separated list such as "v1.4.3,v1.12.0". Every test that runs
// per release asks Releases, so a new module runs nowhere until it is
// chosen here.
const ReleasesEnv = "LHREAL_RELEASES"

// Sample is what make test runs on every change: the affected 1.4 line
// (the seed's state) and the first fixed release with VolumeAttachments.
// Each release in it costs a cold CI its own controller build and a third
// more of the real-controller tests, so the newer releases run in make
// test-releases; docs/testing.md gives the reasons and the costs.
var Sample = []string{"v1.4.3", "v1.5.3"}

// Modules lists every Longhorn release with a controllers module
// (test/longhorn/v*/go.mod), oldest first.
func Modules() []string {
	matches, _ := filepath.Glob(filepath.Join(testenv.ModuleRoot(), "test", "longhorn", "v*", "go.mod"))
	out := make([]string, 0, len(matches))
	for _, m := range matches {
		out = append(out, filepath.Base(filepath.Dir(m)))
	}
	sortReleases(out)
	return out
}

// Releases lists the releases this run uses (ReleasesEnv), oldest first. A
// name without a module is kept, so that Binary and CRDs fail on it
// instead of the run silently proving less.
func Releases() []string {
	var out []string
	switch v := strings.TrimSpace(os.Getenv(ReleasesEnv)); v {
	case "":
		out = slices.Clone(Sample)
	case "all":
		return Modules()
	default:
		for _, r := range strings.Split(v, ",") {
			if r = strings.TrimSpace(r); r != "" && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	sortReleases(out)
	return out
}

func sortReleases(rs []string) {
	sort.Slice(rs, func(i, j int) bool { return versionLess(rs[i], rs[j]) })
}

func versionLess(a, b string) bool {
	pa, pb := versionParts(a), versionParts(b)
	for i := range pa {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func versionParts(v string) [3]int {
	var p [3]int
	_, _ = fmt.Sscanf(strings.TrimPrefix(v, "v"), "%d.%d.%d", &p[0], &p[1], &p[2])
	return p
}

func checkRelease(release string) error {
	if _, err := os.Stat(filepath.Join(moduleDir(release), "go.mod")); err != nil {
		return fmt.Errorf("lhreal: no controllers module for Longhorn %s (have %v)", release, Modules())
	}
	return nil
}

type once struct {
	once sync.Once
	val  string
	data []byte
	err  error
}

var (
	buildsMu sync.Mutex
	builds   = map[string]*once{}
	crdsMu   sync.Mutex
	crds     = map[string]*once{}
)

func onceFor(mu *sync.Mutex, m map[string]*once, key string) *once {
	mu.Lock()
	defer mu.Unlock()
	o := m[key]
	if o == nil {
		o = &once{}
		m[key] = o
	}
	return o
}

// Binary builds longhorn-controllers-<release> into bin/longhorn/ of the
// repository (once per process; the Go build cache makes later processes
// fast) and returns its path.
func Binary(release string) (string, error) {
	if err := checkRelease(release); err != nil {
		return "", err
	}
	o := onceFor(&buildsMu, builds, release)
	o.once.Do(func() { o.val, o.err = build(release) })
	return o.val, o.err
}

// build runs go build under a lock file that every test process shares: go
// test runs internal/lhreal and internal/realtest at once, and unlocked they
// compiled each release twice side by side (twice the CPU of a cold build on
// a 2-core machine) and wrote the binary one of them might be running. The
// process that takes the lock second finds the build cache warm and the
// binary up to date, which go build then leaves alone.
func build(release string) (string, error) {
	dir := filepath.Join(testenv.ModuleRoot(), "bin", "longhorn")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".build-"+release+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer func() { _ = lock.Close() }() // closing releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lhreal: lock the build of %s: %w", release, err)
	}
	// With the plugin's release environment and flags (CGO_ENABLED=0,
	// -trimpath), so the standard library and any module version the two
	// share compile once in a cold CI, not once per set of flags.
	rb, err := testenv.ReadReleaseBuild()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "longhorn-controllers-"+release)
	cmd := exec.Command("go", append(append([]string{"build", "-C", moduleDir(release)}, rb.Flags...), "-o", out, ".")...)
	cmd.Env = append(os.Environ(), rb.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("lhreal: build controllers %s: %v\n%s", release, err, stderr.String())
	}
	return out, nil
}

// helmActions are the Helm template actions in newer releases' crds.yaml
// (the file is copied into the chart), removed: the chart's common labels
// (1.9 on), which matter to nothing here, and the namespace of the
// conversion webhook's Service (1.9.0 only), which is left null and never
// read, as testcluster rewrites webhook conversion to None.
var helmActions = regexp.MustCompile(`\{\{-? *include "(longhorn\.labels" \. \| nindent [0-9]+|release_namespace" \.) *-?\}\}`)

// CRDs returns Longhorn's own k8s/crds.yaml of the release, read from the
// longhorn-manager module in the module cache (the nested module's
// version), with the Helm template actions of newer releases removed.
// Install it with testcluster.Options{CRDYAML: ...} or
// Cluster.InstallCRDYAML.
func CRDs(release string) ([]byte, error) {
	if err := checkRelease(release); err != nil {
		return nil, err
	}
	o := onceFor(&crdsMu, crds, release)
	o.once.Do(func() { o.data, o.err = readCRDs(release) })
	return o.data, o.err
}

func readCRDs(release string) ([]byte, error) {
	// go mod download, not go list -m: on a new machine the module is
	// in no cache until something downloads it, and the first test
	// that needs the CRDs may run before any build of the release.
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/longhorn/longhorn-manager")
	cmd.Dir = moduleDir(release)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); err == nil && jerr != nil {
		err = jerr
	}
	if err != nil || mod.Error != "" || mod.Dir == "" {
		return nil, fmt.Errorf("lhreal: download longhorn-manager %s in %s: %v %s\n%s", release, moduleDir(release), err, mod.Error, stderr.String())
	}
	data, err := os.ReadFile(filepath.Join(mod.Dir, "k8s", "crds.yaml"))
	if err != nil {
		return nil, err
	}
	return helmActions.ReplaceAll(data, nil), nil
}
