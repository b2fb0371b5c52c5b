// Command longhorn-controllers runs Longhorn v1.4.3's own VolumeController,
// unmodified, from the longhorn-manager module, against the API server of a
// kubeconfig: one controller per --nodes entry (controllerID = that node, as
// one longhorn-manager per node would run it), all sharing one DataStore.
//
// Interface (same for every release; see test/longhorn/README.md):
//
//	longhorn-controllers --kubeconfig PATH --namespace NS --nodes a,b,c [--control-addr 127.0.0.1:0]
//
// stdout gets exactly one line, "READY control=http://127.0.0.1:PORT", once
// the informers have synced and the controllers run; stderr gets Longhorn's
// own logrus logs. The control API (package control) injects faults into
// the controllers' Longhorn client through rest.Config.WrapTransport.
//
// Longhorn objects come from the API server through Longhorn's clientset;
// everything the test API server does not serve (core/v1 Nodes, Pods, PVs,
// PVCs, storage, apps, batch, policy, scheduling) comes from an in-process
// fake kube clientset seeded with one Ready core/v1 Node per --nodes name.
// CRD reads and writes go to the API server.
//
// What Longhorn's admission webhooks would add is missing: in v1.4.3 the
// mutators add the "longhorn.io" finalizer to Volumes, Engines and Replicas,
// the longhornvolume label on Engines and Replicas, and defaults in
// Volume.spec (numberOfReplicas, dataLocality, accessMode, engineImage,
// frontend, ...). The datastore's Create* do not add the label or the
// finalizer: the controllers' client adds both to the Engines and Replicas
// they create, as the webhooks would at admission (control.Admit), and the
// test's instance layer adds them, after the fact, to the objects tests
// make. No instance manager runs: engine and replica
// status (currentState, ip, port, endpoint, replicaModeMap) is whatever the
// test's instance layer writes.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/longhorn/longhorn-manager/controller"
	"github.com/longhorn/longhorn-manager/datastore"
	longhorn "github.com/longhorn/longhorn-manager/k8s/pkg/apis/longhorn/v1beta2"
	lhclientset "github.com/longhorn/longhorn-manager/k8s/pkg/client/clientset/versioned"
	lhinformers "github.com/longhorn/longhorn-manager/k8s/pkg/client/informers/externalversions"
	"github.com/longhorn/longhorn-manager/util"

	"github.com/longhorn-engines/kubectl-longhorn-engines/test/longhorn/control"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
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
	lhClient, err := lhclientset.NewForConfig(&lhConfig)
	if err != nil {
		return err
	}
	extensionsClient, err := apiextensionsclientset.NewForConfig(config)
	if err != nil {
		return err
	}
	kubeClient := fake.NewSimpleClientset(kubeObjects(nodes)...)
	// The volume controller uses its kube client only to record Events,
	// through CoreV1().RESTClient(), which the fake clientset leaves nil:
	// give it a real one (the test API server stores the Events).
	eventClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}

	scheme := runtime.NewScheme()
	if err := longhorn.SchemeBuilder.AddToScheme(scheme); err != nil {
		return err
	}

	srv, err := control.Listen(*controlAddr, faults, func(name string, ready bool) error {
		return setNodeReady(kubeClient, name, ready)
	})
	if err != nil {
		return err
	}
	defer srv.Close()

	stopCh := make(chan struct{})
	kubeInformerFactory := informers.NewSharedInformerFactory(kubeClient, 30*time.Second)
	lhInformerFactory := lhinformers.NewSharedInformerFactory(lhClient, 30*time.Second)
	ds := datastore.NewDataStore(lhInformerFactory, lhClient, kubeInformerFactory, kubeClient, extensionsClient, *namespace)

	var vcs []*controller.VolumeController
	for _, node := range nodes {
		logger := logrus.StandardLogger().WithField("node", node)
		vcs = append(vcs, controller.NewVolumeController(logger, ds, scheme, eventClient, *namespace, node, util.NewAtomicCounter()))
	}
	go kubeInformerFactory.Start(stopCh)
	go lhInformerFactory.Start(stopCh)
	if !ds.Sync(stopCh) {
		return fmt.Errorf("datastore cache sync failed")
	}
	for _, vc := range vcs {
		go vc.Run(controller.Workers, stopCh)
	}

	srv.SetReady()
	fmt.Printf("READY control=%s\n", srv.URL())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	close(stopCh)
	return nil
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
