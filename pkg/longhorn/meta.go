package longhorn

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ObjectMeta is the part of an object's metadata the plugin reads. It takes
// the place of Kubernetes' metav1.ObjectMeta (232 bytes, plus the 32 of
// TypeMeta) in every model type: a scan of 10,000 volumes holds about 60,000
// objects, and the fields nothing reads cost about 9 MB of live heap there,
// twice that at peak (docs/performance.md).
//
// Nothing writes a model object back to the API server: repairs are patches
// and deletes with preconditions, and backups are the server's own copy. So
// the metadata left out here (annotations, finalizers, owner references,
// managedFields) is never lost, only not read.
type ObjectMeta struct {
	Name              string            `json:"name,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               types.UID         `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	CreationTimestamp metav1.Time       `json:"creationTimestamp,omitempty"`
	DeletionTimestamp *metav1.Time      `json:"deletionTimestamp,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
}

// ObjectMeta satisfies metav1.Object, so that client-go's caches can key and
// index model objects (the guard's informers keep them, not JSON maps). The
// fields it does not keep read as empty and their setters do nothing.
var _ metav1.Object = (*ObjectMeta)(nil)

func (m *ObjectMeta) GetNamespace() string                  { return m.Namespace }
func (m *ObjectMeta) SetNamespace(ns string)                { m.Namespace = ns }
func (m *ObjectMeta) GetName() string                       { return m.Name }
func (m *ObjectMeta) SetName(name string)                   { m.Name = name }
func (m *ObjectMeta) GetGenerateName() string               { return "" }
func (m *ObjectMeta) SetGenerateName(string)                {}
func (m *ObjectMeta) GetUID() types.UID                     { return m.UID }
func (m *ObjectMeta) SetUID(uid types.UID)                  { m.UID = uid }
func (m *ObjectMeta) GetResourceVersion() string            { return m.ResourceVersion }
func (m *ObjectMeta) SetResourceVersion(rv string)          { m.ResourceVersion = rv }
func (m *ObjectMeta) GetGeneration() int64                  { return 0 }
func (m *ObjectMeta) SetGeneration(int64)                   {}
func (m *ObjectMeta) GetSelfLink() string                   { return "" }
func (m *ObjectMeta) SetSelfLink(string)                    {}
func (m *ObjectMeta) GetCreationTimestamp() metav1.Time     { return m.CreationTimestamp }
func (m *ObjectMeta) SetCreationTimestamp(t metav1.Time)    { m.CreationTimestamp = t }
func (m *ObjectMeta) GetDeletionTimestamp() *metav1.Time    { return m.DeletionTimestamp }
func (m *ObjectMeta) SetDeletionTimestamp(t *metav1.Time)   { m.DeletionTimestamp = t }
func (m *ObjectMeta) GetDeletionGracePeriodSeconds() *int64 { return nil }
func (m *ObjectMeta) SetDeletionGracePeriodSeconds(*int64)  {}
func (m *ObjectMeta) GetLabels() map[string]string          { return m.Labels }
func (m *ObjectMeta) SetLabels(labels map[string]string)    { m.Labels = labels }
func (m *ObjectMeta) GetAnnotations() map[string]string     { return nil }
func (m *ObjectMeta) SetAnnotations(map[string]string)      {}
func (m *ObjectMeta) GetFinalizers() []string               { return nil }
func (m *ObjectMeta) SetFinalizers([]string)                {}
func (m *ObjectMeta) GetOwnerReferences() []metav1.OwnerReference {
	return nil
}
func (m *ObjectMeta) SetOwnerReferences([]metav1.OwnerReference) {}
func (m *ObjectMeta) GetManagedFields() []metav1.ManagedFieldsEntry {
	return nil
}
func (m *ObjectMeta) SetManagedFields([]metav1.ManagedFieldsEntry) {}
