// The constructor calls of Longhorn 1.4 (release.go of its release
// directory, beside main.go).
package main

import (
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/informers"

	"github.com/longhorn/longhorn-manager/controller"
	"github.com/longhorn/longhorn-manager/datastore"
	lhclientset "github.com/longhorn/longhorn-manager/k8s/pkg/client/clientset/versioned"
	lhinformers "github.com/longhorn/longhorn-manager/k8s/pkg/client/informers/externalversions"
	"github.com/longhorn/longhorn-manager/util"

	"github.com/longhorn-engines/kubectl-longhorn-engines/test/longhorn/control/harness"
)

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
		Node: func(node string, logger logrus.FieldLogger, cs *harness.Controllers) {
			cs.Add(controller.NewVolumeController(logger, ds, c.Scheme, c.Events, c.Namespace, node, util.NewAtomicCounter()))
		},
	}, nil
}
