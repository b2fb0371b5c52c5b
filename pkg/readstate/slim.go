package readstate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// slim clears, in an object just decoded from a LIST, what no command reads
// from a LIST, so that a whole namespace's state stays small
// (docs/performance.md). The model's metadata (longhorn.ObjectMeta) keeps no
// managedFields, annotations, owner references or finalizers in the first
// place; slim drops labels, but the longhornvolume label of an engine or replica
// whose spec names no volume (the one label longhorn.VolumeOf reads); the
// snapshots of engines and the parameters of attachment tickets (migrate
// alone reads them, from its own requests). Backups
// and the re-check before a write decode their own copy of each object
// (ReadVolume), untouched.
//
// Values that repeat across objects (namespace, kind, node, image, state
// names...) are shared through in when it is not nil: encoding/json gives
// every occurrence its own copy.
func slim(obj any, in interner) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if in != nil {
		in.sharedMeta(m)
	}
	labels := m.GetLabels()
	m.SetLabels(nil)
	switch o := obj.(type) {
	case *longhorn.Engine:
		o.Labels = volumeLabelOnly(o.Spec.VolumeName, labels)
		o.Status.Snapshots = nil
	case *longhorn.Replica:
		o.Labels = volumeLabelOnly(o.Spec.VolumeName, labels)
	case *longhorn.VolumeAttachment:
		for id, t := range o.Spec.AttachmentTickets {
			t.Parameters = nil // read by migrate only, from its own GETs
			o.Spec.AttachmentTickets[id] = t
		}
	}
	if in != nil {
		in.shared(obj)
	}
}

// volumeLabelOnly keeps the volume label when the spec does not say the
// volume (objects of old releases, or damaged ones).
func volumeLabelOnly(specVolume string, labels map[string]string) map[string]string {
	v, ok := labels[longhorn.VolumeLabel]
	if specVolume != "" || !ok {
		return nil
	}
	return map[string]string{longhorn.VolumeLabel: v}
}
