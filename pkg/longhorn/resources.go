package longhorn

import "k8s.io/apimachinery/pkg/runtime/schema"

const (
	// Group is the API group of every Longhorn resource.
	Group = "longhorn.io"
	// APIVersionName is the only API version the plugin speaks: v1beta2 is
	// stored from Longhorn 1.3.0 on, and v1beta1 is gone from 1.10.
	APIVersionName = "v1beta2"
	// APIVersion is group/version as written in objects.
	APIVersion = Group + "/" + APIVersionName
	// DefaultNamespace is where Longhorn installs itself unless told otherwise.
	DefaultNamespace = "longhorn-system"

	// VolumeLabel is set on engines and replicas by Longhorn's mutating webhook;
	// longhorn-manager lists a volume's engines with it too.
	VolumeLabel = "longhornvolume"
	// Finalizer guards engines until their process is cleaned up.
	Finalizer = "longhorn.io"
	// VersionSetting holds the running Longhorn version in its value.
	VersionSetting = "current-longhorn-version"
	// ReplicaAutoBalanceSetting is the global replica-auto-balance setting.
	ReplicaAutoBalanceSetting = "replica-auto-balance"
)

// Resource names a Longhorn resource: plural, kind and short name.
type Resource struct {
	Plural    string
	Kind      string
	ShortName string
}

// GVR returns the full GroupVersionResource. Always use it rather than the bare
// plural: "volumeattachments" also exists in storage.k8s.io.
func (r Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: Group, Version: APIVersionName, Resource: r.Plural}
}

// GroupResource is the plural qualified by the group, as kubectl prints it
// ("engines.longhorn.io").
func (r Resource) GroupResource() string { return r.Plural + "." + Group }

// Qualified is the kind qualified by the group in lower case, as kubectl
// prints it in `engine.longhorn.io "x" deleted`.
func (r Resource) Qualified() string { return lower(r.Kind) + "." + Group }

var (
	Volumes           = Resource{"volumes", "Volume", "lhv"}
	Engines           = Resource{"engines", "Engine", "lhe"}
	Replicas          = Resource{"replicas", "Replica", "lhr"}
	VolumeAttachments = Resource{"volumeattachments", "VolumeAttachment", "lhva"}
	Nodes             = Resource{"nodes", "Node", "lhn"}
	Settings          = Resource{"settings", "Setting", "lhs"}
	InstanceManagers  = Resource{"instancemanagers", "InstanceManager", "lhim"}
	// EngineFrontends exist from Longhorn 1.12.0, for v2 volumes only.
	EngineFrontends = Resource{"enginefrontends", "EngineFrontend", "lhef"}
)

// AllResources lists every resource the plugin knows, in a stable order.
var AllResources = []Resource{Volumes, Engines, Replicas, VolumeAttachments, Nodes, Settings, InstanceManagers, EngineFrontends}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
