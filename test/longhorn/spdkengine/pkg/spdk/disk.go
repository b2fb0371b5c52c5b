// Package spdk stands in for github.com/longhorn/longhorn-spdk-engine/pkg/spdk
// at the version longhorn-manager v1.10.0 requires, which the Go module
// proxy does not serve. longhorn-manager uses one name from it, the disk
// state its disk monitor writes and compares; the monitor (which needs a
// real node) does not run in the test binaries, so only consistency matters.
package spdk

// DiskState is an SPDK disk's state.
type DiskState string

// DiskStateReady is a ready disk.
const DiskStateReady = DiskState("ready")
