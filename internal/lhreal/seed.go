package lhreal

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

// DefaultEngineImage is the engine image of internal/testenv's objects.
const DefaultEngineImage = "longhornio/longhorn-engine:test"

// EngineImageName is Longhorn's name for an engine image's object:
// "ei-" and the first 8 hex digits of the image's SHA-512.
func EngineImageName(image string) string {
	sum := sha512.Sum512([]byte(strings.TrimSpace(image)))
	return "ei-" + hex.EncodeToString(sum[:])[:8]
}

// Seed creates what the volume controller needs before it acts on volumes
// (see the package comment): the default-engine-image Setting, a deployed
// EngineImage on every node, and a Ready, schedulable Longhorn Node per node
// with one schedulable disk whose UUID is "disk-<node>" (internal/testenv's
// replicas use that diskID). Objects that exist already are left alone.
// image "" means DefaultEngineImage.
func Seed(ctx context.Context, c *testcluster.Cluster, image string, nodes ...string) error {
	if image == "" {
		image = DefaultEngineImage
	}
	deployed := map[string]any{}
	for _, n := range nodes {
		deployed[n] = true
	}
	objs := []map[string]any{
		{"kind": "Setting", "metadata": map[string]any{"name": "default-engine-image"}, "value": image},
		{"kind": "EngineImage", "metadata": map[string]any{"name": EngineImageName(image)},
			"spec": map[string]any{"image": image},
			"status": map[string]any{"state": "deployed", "refCount": int64(0), "nodeDeploymentMap": deployed,
				"conditions": []any{condition("ready")}}},
	}
	for _, n := range nodes {
		disk := "disk-" + n
		objs = append(objs, map[string]any{"kind": "Node", "metadata": map[string]any{"name": n},
			"spec": map[string]any{"name": n, "allowScheduling": true,
				"disks": map[string]any{disk: map[string]any{"path": "/var/lib/longhorn/", "allowScheduling": true,
					"storageReserved": int64(0), "tags": []any{}}}},
			"status": map[string]any{
				"conditions": []any{condition("Ready"), condition("Schedulable"), condition("MountPropagation")},
				"diskStatus": map[string]any{disk: map[string]any{"diskUUID": disk,
					"storageAvailable": int64(100) << 30, "storageMaximum": int64(100) << 30, "storageScheduled": int64(0),
					"conditions": []any{condition("Ready"), condition("Schedulable")}}}}})
	}
	for _, o := range objs {
		o["apiVersion"] = testcluster.Group + "/" + testcluster.Version
		if _, err := c.Create(ctx, &unstructured.Unstructured{Object: o}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("lhreal: seed %s: %w", o["kind"], err)
		}
	}
	return nil
}

func condition(t string) map[string]any {
	return map[string]any{"type": t, "status": "True", "reason": "", "message": ""}
}
