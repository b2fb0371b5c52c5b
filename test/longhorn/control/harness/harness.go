// Package harness is the release-independent body of every
// longhorn-controllers test binary: the flags, the clients, the fake kube
// clientset and its Nodes, the control API, the READY line and the signal
// handling. A release's release.go adds only what differs between releases:
// the constructor calls of its DataStore and controllers (Release).
//
// Every release module compiles this package against its own k8s.io
// versions (longhorn-manager's replace block of that release). It therefore
// uses only client-go and apimachinery APIs that Longhorn 1.4's k8s.io
// v0.23 and 1.12's v0.36 share, and its go.mod requires the oldest of
// them, so that minimum version selection never raises a version a
// release module pins.
package harness

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/longhorn-engines/kubectl-longhorn-engines/test/longhorn/control"
)

// Resync is the informers' resync period. Longhorn's own is 30s, and
// some of its transitions happen only on a resync (1.10.0 finishes a
// detach whose replicas stopped on the next one). The explorer calls a
// volume stuck when nothing changes for a quiet period of a few seconds,
// so one resync must fall inside that period: a shorter period changes
// when Longhorn syncs, not what a sync does.
const Resync = 5 * time.Second

// ShareManagerImage is only used for RWX share managers, which need pods
// this binary does not run.
const ShareManagerImage = "longhornio/longhorn-share-manager:test"

// Clients are what a release's constructors take.
type Clients struct {
	Namespace string
	// Longhorn is the config for Longhorn's clientset: its transport
	// answers injected faults and adds what the admission webhooks would
	// (control.Admit).
	Longhorn *rest.Config
	// Kube is the fake kube clientset, seeded with a Ready core/v1 Node per
	// node: the test API server serves Longhorn's CRDs only.
	Kube *fake.Clientset
	// Events records Events: the controllers write them through
	// CoreV1().RESTClient(), which the fake clientset leaves nil, so this
	// is a real one for the test API server.
	Events     kubernetes.Interface
	Extensions apiextensionsclientset.Interface
	// Scheme holds Longhorn's types, for the controllers' event recorders.
	Scheme *runtime.Scheme
}

// Runner is a controller's Run method.
type Runner func(workers int, stopCh <-chan struct{})

// Longhorn is one release's DataStore and its controllers, built but not
// started.
type Longhorn struct {
	// Start starts the informer factories.
	Start func(stopCh <-chan struct{})
	// Sync waits for the DataStore's caches.
	Sync func(stopCh <-chan struct{}) bool
	// Workers per controller (Longhorn's controller.Workers).
	Workers int
	// Node adds to cs the controllers one longhorn-manager on node would
	// run: a release says only which constructors it calls.
	Node func(node string, logger logrus.FieldLogger, cs *Controllers)
}

// runners builds node's controllers.
func (lh *Longhorn) runners(node string) ([]Runner, error) {
	var cs Controllers
	lh.Node(node, logrus.StandardLogger().WithField("node", node), &cs)
	return cs.Runners()
}

// Release builds a release's Longhorn from c and lhClient, the release's
// Longhorn clientset.
type Release[LH any] func(c *Clients, lhClient LH) (*Longhorn, error)

// Main runs the binary: addToScheme adds the release's Longhorn types to a
// scheme, newClient is the release's clientset constructor (for
// Clients.Longhorn), release builds its controllers. It exits the process.
func Main[LH any](addToScheme func(*runtime.Scheme) error, newClient func(*rest.Config) (LH, error), release Release[LH]) {
	if err := run(addToScheme, newClient, release); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run[LH any](addToScheme func(*runtime.Scheme) error, newClient func(*rest.Config) (LH, error), release Release[LH]) error {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server serving Longhorn's CRDs")
	namespace := flag.String("namespace", "longhorn-system", "Longhorn namespace")
	nodesFlag := flag.String("nodes", "", "comma-separated node names; one controller runs per node")
	controlAddr := flag.String("control-addr", "127.0.0.1:0", "loopback address of the control API")
	flag.Parse()
	nodes := splitNodes(*nodesFlag)
	if *kubeconfig == "" || len(nodes) == 0 {
		return fmt.Errorf("--kubeconfig and --nodes are required")
	}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	config.QPS, config.Burst = 1000, 1000
	faults := &control.Faults{}
	lhConfig := *config
	// Faults answer before admission, as a failed request never reaches
	// the webhooks.
	lhConfig.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { return faults.WrapTransport(control.Admit(rt)) }
	c := &Clients{Namespace: *namespace, Longhorn: &lhConfig, Kube: fake.NewSimpleClientset(kubeObjects(nodes)...), Scheme: runtime.NewScheme()}
	if c.Extensions, err = apiextensionsclientset.NewForConfig(config); err != nil {
		return err
	}
	if c.Events, err = kubernetes.NewForConfig(config); err != nil {
		return err
	}
	if err := addToScheme(c.Scheme); err != nil {
		return err
	}

	lhClient, err := newClient(c.Longhorn)
	if err != nil {
		return err
	}
	lh, err := release(c, lhClient)
	if err != nil {
		return err
	}
	managers := &managers{lh: lh, running: map[string]chan struct{}{}}
	srv, err := control.Listen(*controlAddr, faults, func(name string, ready bool) error {
		if err := setNodeReady(c.Kube, name, ready); err != nil {
			return err
		}
		return managers.set(name, ready)
	})
	if err != nil {
		return err
	}
	defer srv.Close()

	// The first controllers are built before the informers start, so that
	// every informer they ask for is started with the others and their
	// handlers see the informers' resyncs from the beginning (1.10.0
	// finishes a detach only on a resync); they run once the caches synced.
	initial := make([][]Runner, len(nodes))
	for i, node := range nodes {
		if initial[i], err = lh.runners(node); err != nil {
			return err
		}
	}
	stopCh := make(chan struct{})
	lh.Start(stopCh)
	if !lh.Sync(stopCh) {
		return fmt.Errorf("datastore cache sync failed")
	}
	for i, node := range nodes {
		managers.run(node, initial[i])
	}

	srv.SetReady()
	fmt.Printf("READY control=%s\n", srv.URL())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	managers.stopAll()
	close(stopCh)
	return nil
}

// managers are the longhorn-managers of the nodes, one set of controllers
// per node. A node that goes down takes its manager with it, as a powered-off
// node does: its controllers stop (else they would keep claiming the volumes
// the other nodes' controllers take over from a down node, and the volume's
// owner would flip between them on every sync). A node that comes back gets
// a new manager, as a restarted pod would.
type managers struct {
	lh      *Longhorn
	mu      sync.Mutex
	running map[string]chan struct{}
}

func (m *managers) set(node string, up bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	stop, running := m.running[node]
	switch {
	case up && !running:
		rs, err := m.lh.runners(node)
		if err != nil {
			return err
		}
		m.start(node, rs)
	case !up && running:
		close(stop)
		delete(m.running, node)
	}
	return nil
}

// run starts node's first controllers.
func (m *managers) run(node string, rs []Runner) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.start(node, rs)
}

// start runs rs until node goes down; m.mu is held.
func (m *managers) start(node string, rs []Runner) {
	stop := make(chan struct{})
	for _, r := range rs {
		go r(m.lh.Workers, stop)
	}
	m.running[node] = stop
}

func (m *managers) stopAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for node, stop := range m.running {
		close(stop)
		delete(m.running, node)
	}
}

func splitNodes(s string) []string {
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// kubeObjects are the fake kube clientset's seed: a Ready core/v1 Node per
// Longhorn node.
func kubeObjects(nodes []string) []runtime.Object {
	var objs []runtime.Object
	for _, n := range nodes {
		objs = append(objs, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{corev1.LabelHostname: n}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now(),
			}}},
		})
	}
	return objs
}

func setNodeReady(kubeClient *fake.Clientset, name string, ready bool) error {
	ctx := context.Background()
	node, err := kubeClient.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			node.Status.Conditions[i].Status = status
			node.Status.Conditions[i].LastTransitionTime = metav1.Now()
		}
	}
	_, err = kubeClient.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}
