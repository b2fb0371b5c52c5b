// Command longhorn-controllers runs the VolumeController of the
// longhorn-manager version its module requires (1.4), unmodified, one per
// --nodes entry, sharing one DataStore. Everything else (flags, clients,
// control API) is package harness; test/longhorn/README.md describes the
// binary.
package main

import (
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/informers"

	"github.com/longhorn/longhorn-manager/controller"
	"github.com/longhorn/longhorn-manager/datastore"
	longhorn "github.com/longhorn/longhorn-manager/k8s/pkg/apis/longhorn/v1beta2"
	lhclientset "github.com/longhorn/longhorn-manager/k8s/pkg/client/clientset/versioned"
	lhinformers "github.com/longhorn/longhorn-manager/k8s/pkg/client/informers/externalversions"
	"github.com/longhorn/longhorn-manager/util"

	"github.com/longhorn-engines/kubectl-longhorn-engines/test/longhorn/control/harness"
)

func main() { harness.Main(longhorn.SchemeBuilder.AddToScheme, lhclientset.NewForConfig, release) }

// release: 1.4 builds its informer factories itself, and has no
// VolumeAttachment controller.
func release(c *harness.Clients, lhClient *lhclientset.Clientset) (*harness.Longhorn, error) {
	kubeFactory := informers.NewSharedInformerFactory(c.Kube, harness.Resync)
	lhFactory := lhinformers.NewSharedInformerFactory(lhClient, harness.Resync)
	ds := datastore.NewDataStore(lhFactory, lhClient, kubeFactory, c.Kube, c.Extensions, c.Namespace)
	return &harness.Longhorn{
		Start: func(stopCh <-chan struct{}) {
			go kubeFactory.Start(stopCh)
			go lhFactory.Start(stopCh)
		},
		Sync:    ds.Sync,
		Workers: controller.Workers,
		Node: func(node string, logger logrus.FieldLogger) ([]harness.Runner, error) {
			var cs harness.Controllers
			cs.Add(controller.NewVolumeController(logger, ds, c.Scheme, c.Events, c.Namespace, node, util.NewAtomicCounter()))
			return cs.Runners()
		},
	}, nil
}
