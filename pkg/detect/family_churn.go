package detect

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// migrationReplicaChurn: during a migration the migration engine restarts
// for ever, or never runs, because its clone replicas inherited
// spec.lastFailedAt from their originals or a directory was cloned twice
// (longhorn#11397, #7128, #12311; 1.8.3–1.10.1). Report only: the cure is
// an upgrade, or rolling the migration back.
func migrationReplicaChurn(c *familyCtx, f *Finding) bool {
	v := c.v
	target := v.Spec.MigrationNodeID
	if target == "" || v.Spec.NodeID == "" {
		return false
	}
	mig := c.engineOn(target)
	if mig == nil || mig.Spec.Active {
		return false
	}
	var clones []*longhorn.Replica
	var inherited []string
	for _, r := range c.replicas {
		if r.Spec.EngineName != mig.Name {
			continue
		}
		clones = append(clones, r)
		if r.Spec.LastFailedAt != "" && r.Spec.HealthyAt == "" {
			inherited = append(inherited, fmt.Sprintf("%s (lastFailedAt %s)", r.Name, r.Spec.LastFailedAt))
		}
	}
	why, never := mig.MigrationRestart(clones)
	var evidence string
	switch {
	case len(inherited) > 0:
		evidence = fmt.Sprintf("clone replicas of migration engine %s carry a lastFailedAt but were never healthy: %s", mig.Name, strings.Join(inherited, ", "))
	case never:
		evidence = why
	default:
		return false
	}
	k := FamilyInfo{
		Issues:          []string{"longhorn/longhorn#11397", "longhorn/longhorn#7128", "longhorn/longhorn#12311", "harvester/harvester#9705"},
		Releases:        "1.8.3–1.10.1",
		AffectedRelease: c.inRange("1.8.3", "1.10.1"),
		Steps: []string{
			c.kubectl("get replicas.longhorn.io -l longhornvolume=" + v.Name + " -o custom-columns=NAME:.metadata.name,ENGINE:.spec.engineName,NODE:.spec.nodeID,LASTFAILED:.spec.lastFailedAt,HEALTHY:.spec.healthyAt,STATE:.status.currentState"),
			"report only: nothing to repair by hand; let the VM migration fail or cancel it (Longhorn rolls back), and upgrade Longhorn past 1.10.1 before draining again",
		},
	}
	c.set(f, TypeMigrationReplicaChurn, SeverityWarning,
		fmt.Sprintf("live migration to %s does not settle: %s; report only, no repair", target, evidence), k, "migration-replica-churn")
	markMigration(f, target)
	return true
}
