package fix_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/fix"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
)

// If the replica flags end up inverted after a change (here someone flips
// them back and deletes the just-deactivated engine: the data-loss path of
// a delete on 1.3/1.4), fix stops every further write, prints recovery
// steps and exits 3.
func TestFixStopsOnInvertedFlags(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol-a").Add(stripVersion(testenv.TwoActiveEngines(testenv.L14a, "vol-b"))))
	staleA := testenv.EngineName(testenv.L14a, "vol-a", 0)
	before := versions(t, ctx)
	invert := func(name string) {
		if name != staleA {
			return
		}
		replicas := cluster.Dynamic().Resource(longhorn.Replicas.GVR()).Namespace(cluster.Namespace())
		l, err := replicas.List(ctx, metav1.ListOptions{LabelSelector: longhorn.VolumeLabel + "=vol-a"})
		if err != nil {
			t.Error(err)
			return
		}
		for _, r := range l.Items {
			eng, _, _ := unstructured.NestedString(r.Object, "spec", "engineName")
			patch := fmt.Sprintf(`{"spec":{"active":%t}}`, eng == staleA)
			if _, err := replicas.Patch(ctx, r.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Error(err)
			}
		}
		engines := cluster.Dynamic().Resource(longhorn.Engines.GVR()).Namespace(cluster.Namespace())
		if _, err := engines.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Error(err)
		}
		if err := engines.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "backup")
	res := cli(t, cluster.KubeconfigPath(), fix.Hooks{AfterWrite: invert}).Run(ctx, fixArgs("--all", "--yes", "--backup-dir", dir, "--timeout", "30s")...)
	if res.Code != cmdutil.ExitAttention {
		t.Errorf("exit %d, want %d", res.Code, cmdutil.ExitAttention)
	}
	testenv.Contains(t, "stdout", res.Stdout, `engine.longhorn.io "`+staleA+`" deactivated`, `volume.longhorn.io "vol-a" inverted: STOPPED: replica flags inverted`, "which no longer exists",
		`volume.longhorn.io "vol-b" not-attempted:`)
	testenv.Contains(t, "stderr", res.Stderr, "STOP: volume vol-a needs manual recovery", "do not delete any replica", "set spec.active=true on them",
		"The objects as they were before the change: "+filepath.Join(dir, "vol-a.yaml"), "error: stopped: replica flags are inverted")
	after := versions(t, ctx)
	for k, v := range before {
		if strings.Contains(k, "vol-b") && after[k] != v {
			t.Errorf("%s written after the stop", k)
		}
	}
}

func stripVersion(o *testenv.Objects) *testenv.Objects { o.Version = ""; return o }

// proxy forwards TCP to the API server until closed, so a test can make the
// server vanish for the plugin only.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// kubeconfigVia writes a copy of the admin kubeconfig pointing at addr.
func kubeconfigVia(t *testing.T, addr string) string {
	cfg, err := clientcmd.LoadFromFile(cluster.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = "https://" + addr
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// The API server going away mid-run is one clear line per volume, nothing
// is half done, and the action log records the attempt.
func TestFixServerGoneMidway(t *testing.T) {
	for _, when := range []string{"after the plan", "right before the write"} {
		t.Run(when, func(t *testing.T) {
			ctx := reset(t)
			create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
			before := versions(t, ctx)
			p := startProxy(t, strings.TrimPrefix(cluster.Host(), "https://"))
			kc := kubeconfigVia(t, p.ln.Addr().String())
			var h fix.Hooks
			if when == "after the plan" {
				h.AfterPlan = p.close
			} else {
				h.BeforeWrite = func(string) { p.close() }
			}
			dir := filepath.Join(t.TempDir(), "backup")
			res := cli(t, kc, h).Run(ctx, fixArgs("vol", "--yes", "--backup-dir", dir)...)
			if res.Code != cmdutil.ExitNeedsAction {
				t.Errorf("exit %d", res.Code)
			}
			testenv.Contains(t, "stdout", res.Stdout, `volume.longhorn.io "vol" failed: `, "cannot reach the Kubernetes API server")
			if n := strings.Count(res.Stdout, "cannot reach"); n != 1 {
				t.Errorf("%d lines about the lost server", n)
			}
			testenv.AssertUnchanged(t, before, versions(t, ctx))
			log := readFile(t, filepath.Join(dir, fix.ActionLogName))
			if when == "after the plan" {
				testenv.Contains(t, "actions.log", log, "recheck volume=vol error=")
			} else {
				testenv.Contains(t, "actions.log", log, "backup volume=vol", "attempt", "error=")
			}
		})
	}
}

// The backup re-creates the objects (kubectl create -f after they are gone)
// and restores them (kubectl apply -f after a change).
func TestFixBackupRestores(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
	original := objectsOf(t, ctx)
	dir := filepath.Join(t.TempDir(), "backup")
	if res := runFix(t, ctx, "vol", "--yes", "--wait=false", "--backup-dir", dir); res.Code != cmdutil.ExitOK {
		t.Fatalf("exit %d", res.Code)
	}
	file := filepath.Join(dir, "vol.yaml")
	stale := testenv.EngineName(testenv.L14a, "vol", 0)
	kubectl, _ := exec.LookPath("kubectl")

	if kubectl != "" {
		// apply puts spec.active back on the deactivated engine.
		out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", cluster.KubeconfigPath(), "apply", "-f", file).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl apply: %v\n%s", err, out)
		}
		if active, _, _ := unstructured.NestedBool(getEngine(t, ctx, stale).Object, "spec", "active"); !active {
			t.Error("kubectl apply -f did not restore spec.active")
		}
	}

	if err := cluster.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if kubectl != "" {
		out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", cluster.KubeconfigPath(), "create", "-f", file).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl create: %v\n%s", err, out)
		}
	} else {
		t.Log("kubectl not on PATH: re-creating through the API")
		recreate(t, ctx, file)
	}
	restored := objectsOf(t, ctx)
	for key, o := range original {
		if key == "settings/"+longhorn.VersionSetting {
			continue // not part of a volume's backup
		}
		r, ok := restored[key]
		if !ok {
			t.Errorf("%s not re-created", key)
			continue
		}
		for _, f := range [][]string{{"spec"}, {"metadata", "labels"}, {"metadata", "finalizers"}} {
			a, _, _ := unstructured.NestedFieldNoCopy(o.Object, f...)
			b, _, _ := unstructured.NestedFieldNoCopy(r.Object, f...)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s %v: %v, was %v", key, f, b, a)
			}
		}
	}
}

func objectsOf(t *testing.T, ctx context.Context) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	for _, r := range []longhorn.Resource{longhorn.Volumes, longhorn.Engines, longhorn.Replicas, longhorn.Settings} {
		l, err := cluster.Dynamic().Resource(r.GVR()).Namespace(cluster.Namespace()).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range l.Items {
			out[r.Plural+"/"+l.Items[i].GetName()] = &l.Items[i]
		}
	}
	return out
}

func recreate(t *testing.T, ctx context.Context, file string) {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		if len(obj) == 0 {
			continue
		}
		if _, err := cluster.Create(ctx, &unstructured.Unstructured{Object: obj}); err != nil {
			t.Fatal(err)
		}
	}
}

// Without --backup-dir the backup goes to a new timestamped folder in the
// working directory, and fix says where.
func TestFixDefaultBackupDir(t *testing.T) {
	ctx := reset(t)
	create(t, ctx, testenv.TwoActiveEngines(testenv.L14a, "vol"))
	t.Chdir(t.TempDir())
	res := runFix(t, ctx, "vol", "--yes", "--wait=false")
	if res.Code != cmdutil.ExitOK {
		t.Fatalf("exit %d", res.Code)
	}
	dirs, _ := filepath.Glob("longhorn-engines-fix-*")
	if len(dirs) != 1 {
		t.Fatalf("backup folders %v", dirs)
	}
	testenv.Contains(t, "stderr", res.Stderr, "Backups and the action log go to "+dirs[0])
	for _, f := range []string{"vol.yaml", fix.ActionLogName} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Error(err)
		}
	}
}

// Property over generated cluster states, through the real command: the
// survivor is never written, and a volume whose plan does not act (a
// precondition failed, a fixed release...) is not written at all.
func TestFixPropertyOverGeneratedStates(t *testing.T) {
	rng := rand.New(rand.NewPCG(6642, 7))
	client, err := readstate.NewClient(cluster.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{testenv.L13, testenv.L14a, testenv.L15a, testenv.L16} {
		t.Run(version, func(t *testing.T) {
			ctx := reset(t)
			all := &testenv.Objects{Version: version}
			for i := 0; i < 10; i++ {
				all.Add(stripVersion(fix.RandomObjects(rng, version, "vol-"+string(rune('a'+i)))))
			}
			create(t, ctx, all)
			st, err := readstate.Load(ctx, client, readstate.LoadOptions{Namespace: cluster.Namespace()})
			if err != nil {
				t.Fatal(err)
			}
			acts := fix.PlanActs(st)
			before := versions(t, ctx)
			// A migration request (what a drain's CSI attach makes) lands on
			// some volumes after the plan or after one of the writes: no
			// engine of such a volume may be written afterwards, unless the
			// request is one Longhorn cannot have started (every engine
			// active, none on the node asked for), which waits on the
			// repair (detect's "no migration has started").
			requested := map[string]bool{}
			writes := 0
			requestAt := rng.IntN(6)
			request := func(name string) {
				writes++
				if writes%6 != requestAt {
					return
				}
				vol := ownerOfObject(st, name)
				if vol == "" || requested[vol] {
					return
				}
				requested[vol] = true
				patch := []byte(`{"spec":{"migrationNodeID":"node-c"}}`)
				if _, err := cluster.Dynamic().Resource(longhorn.Volumes.GVR()).Namespace(cluster.Namespace()).Patch(ctx, vol, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
					t.Error(err)
				}
				requestedAfter[vol] = versionsOfEngines(t, ctx, vol)
			}
			res := cli(t, cluster.KubeconfigPath(), fix.Hooks{AfterWrite: request}).Run(ctx, fixArgs("--all", "--yes", "--wait=false", "--backup-dir", t.TempDir())...)
			if res.Code == cmdutil.ExitNoCheck || res.Code == cmdutil.ExitAttention {
				t.Fatalf("exit %d", res.Code)
			}
			after := versions(t, ctx)
			for vol, engs := range requestedAfter {
				waits := true
				for _, e := range st.EnginesOf(vol) {
					waits = waits && e.Spec.Active && e.Spec.NodeID != "node-c"
				}
				if waits {
					continue
				}
				for k, v := range engs {
					if after[k] != v {
						t.Errorf("%s written after a migration request for %s", k, vol)
					}
				}
			}
			clear(requestedAfter)
			wrote := 0
			for _, e := range st.Engines {
				key := "engines/" + e.Name
				changed := after[key] != before[key]
				vol := e.Spec.VolumeName
				stale := acts[vol] && e.IsActive() && e.Spec.NodeID != volOf(st, vol).Status.CurrentNodeID
				switch {
				case changed && !acts[vol]:
					t.Errorf("%s written although the plan for %s did not act", e.Name, vol)
				case changed && !stale:
					t.Errorf("%s written: it is the survivor of %s", e.Name, vol)
				case changed:
					wrote++
				}
			}
			// Replicas: written only for volumes whose plan acts, and then
			// only toward the survivor's flags (checked on the objects).
			for _, r := range st.Replicas {
				key := "replicas/" + r.Name
				if after[key] != before[key] {
					wrote++
					if !acts[r.Spec.VolumeName] {
						t.Errorf("%s written although the plan for %s did not act", r.Name, r.Spec.VolumeName)
					}
				}
			}
			for key, v := range before {
				if !strings.HasPrefix(key, "engines/") && !strings.HasPrefix(key, "replicas/") && !strings.HasPrefix(key, "volumes/") && after[key] != v {
					t.Errorf("%s written", key)
				}
			}
			n := 0
			for _, a := range acts {
				if a {
					n++
				}
			}
			t.Logf("%d of %d volumes repairable, %d objects written, %d migration requests", n, len(acts), wrote, len(requested))
			if n > 0 && wrote == 0 {
				t.Error("nothing written although some plans act")
			}
		})
	}
}

// requestedAfter records, per volume given a migration request, its
// engines' resourceVersions at that moment.
var requestedAfter = map[string]map[string]string{}

func ownerOfObject(st *longhorn.State, name string) string {
	for _, e := range st.Engines {
		if e.Name == name {
			return e.Spec.VolumeName
		}
	}
	for _, r := range st.Replicas {
		if r.Name == name {
			return r.Spec.VolumeName
		}
	}
	return ""
}

func versionsOfEngines(t *testing.T, ctx context.Context, vol string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range versions(t, ctx) {
		if strings.HasPrefix(k, "engines/"+vol+"-") {
			out[k] = v
		}
	}
	return out
}

func volOf(st *longhorn.State, name string) *longhorn.Volume {
	if v := st.Volume(name); v != nil {
		return v
	}
	panic(errors.New("no volume " + name))
}
