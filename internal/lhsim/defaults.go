package lhsim

import (
	"maps"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// volumeDefaults are the spec fields Longhorn's volume mutating webhook sets
// on create (webhook/resources/volume/mutator.go of each release), with the
// values it uses when the volume and the settings leave them unset. The test
// server runs no webhooks; without these a real controller's write of the
// whole volume fails its CRD's enum validation. Fields a release's CRD does
// not have are pruned by the API server, so the boundaries below matter only
// for the releases whose CRDs are served (docs/testing.md). Checked against
// the mutators of 1.4.3, 1.5.3, 1.6.0, 1.7.0, 1.8.0, 1.9.0, 1.10.0, 1.11.1
// and 1.12.0 (1.11 and 1.12 set the same fields as 1.10; their new
// spec.cloneMode is set only for a volume with a data source).
func volumeDefaults(v longhorn.Version) map[string]any {
	d := map[string]any{
		"replicaAutoBalance":        "ignored",
		"diskSelector":              []any{},
		"nodeSelector":              []any{},
		"snapshotDataIntegrity":     "ignored",
		"restoreVolumeRecurringJob": "ignored",
		"unmapMarkSnapChainRemoved": "ignored",
	}
	if v.AtLeast(1, 5, 0) {
		maps.Copy(d, map[string]any{
			"replicaSoftAntiAffinity":     "ignored",
			"replicaZoneSoftAntiAffinity": "ignored",
			"backupCompressionMethod":     "lz4", // the backup-compression-method setting's default
		})
	}
	switch {
	case v.AtLeast(1, 9, 0):
		d["offlineRebuilding"] = "ignored"
	case v.AtLeast(1, 7, 0):
		// 1.7 and 1.8 set neither field
	case v.AtLeast(1, 5, 0):
		d["offlineReplicaRebuilding"] = "disabled" // set so for v1 volumes
	}
	if v.AtLeast(1, 6, 0) {
		d["replicaDiskSoftAntiAffinity"] = "ignored"
		d["snapshotMaxCount"] = int64(250) // the snapshot-max-count setting's default
	}
	if v.AtLeast(1, 7, 0) {
		d["freezeFilesystemForSnapshot"] = "ignored"
	}
	if v.AtLeast(1, 8, 0) {
		d["backupTargetName"] = "default"
	}
	if v.AtLeast(1, 10, 0) {
		d["backupBlockSize"] = "2097152" // the default-backup-block-size setting's default, 2 MiB
	}
	return d
}
