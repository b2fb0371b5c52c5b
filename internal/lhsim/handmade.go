package lhsim

import (
	"maps"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// VolumeSpecDefaults is the spec a Volume made by hand needs on release v
// before Longhorn's own controllers may write it back: what CreateVolume
// writes beside the caller's choices (the API's defaults and the volume
// mutator's, volumeDefaults). internal/explore writes generated volumes
// with it; the caller's own fields win.
func VolumeSpecDefaults(v longhorn.Version) map[string]any {
	d := map[string]any{
		"frontend":            "blockdev",
		"disableFrontend":     false,
		"lastAttachedBy":      "",
		"staleReplicaTimeout": int64(30),
		"dataLocality":        "disabled",
		"Standby":             false,
	}
	maps.Copy(d, volumeDefaults(v))
	return d
}

// SetEngineFields writes image and data engine into a Volume, Engine or
// Replica spec under the field names release v uses (engineImage or image;
// no data engine field, backendStoreDriver or dataEngine), as the
// simulator's own objects carry them.
func SetEngineFields(v longhorn.Version, spec map[string]any, image, dataEngine string) {
	(&Sim{b: behaviourOf(v)}).setEngineFields(spec, image, dataEngine)
}

// ImageFieldsOf names the spec fields of release v that SetEngineFields
// writes, image first.
func ImageFieldsOf(v longhorn.Version) (image, dataEngine string) {
	b := behaviourOf(v)
	return b.imageField, b.dataEngineField
}

// DiskOf is the disk AddNode gives node: its UUID (a replica's spec.diskID)
// and path (spec.diskPath).
func DiskOf(node string) (id, path string) { return diskID(node), defaultDiskPath }
