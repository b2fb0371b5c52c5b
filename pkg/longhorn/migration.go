package longhorn

import (
	"fmt"
	"slices"
	"strings"
)

// MigrationRestart tells why Longhorn's volume controller would stop and
// restart this migration engine on its next sync, given the replicas whose
// engineName is e, or "" when it would leave it running. Every release
// served (1.4.3 to 1.10.0, prepareReplicasAndEngineForMigration) restarts
// it until spec.replicaAddressMap names exactly the running clones, one per
// data directory; a confirm written while the engine restarts leaves
// Longhorn waiting for an engine on the new node that it never starts
// again. never is set when the map cannot settle without a rollback.
func (e *Engine) MigrationRestart(clones []*Replica) (why string, never bool) {
	byPath := map[string][]string{}
	var running []string
	for _, r := range clones {
		p := r.DataPath()
		if p == "" {
			continue // Longhorn skips a clone not scheduled yet
		}
		if r.DeletionTimestamp != nil {
			// it can still take its directory's place in Longhorn's map
			return fmt.Sprintf("replica %s of migration engine %s is being deleted", r.Name, e.Name), false
		}
		byPath[p] = append(byPath[p], r.Name)
		if r.Status.CurrentState == StateRunning {
			running = append(running, r.Name)
		}
	}
	for _, p := range SortedKeys(byPath) {
		if names := byPath[p]; len(names) > 1 {
			// Longhorn keeps one of them per directory, a different one
			// from sync to sync, so the map never settles.
			slices.Sort(names)
			return fmt.Sprintf("Longhorn cloned data directory %s twice for migration engine %s (replicas %s): it keeps restarting that engine; roll the migration back and start it again",
				p, e.Name, strings.Join(names, ", ")), true
		}
	}
	slices.Sort(running)
	if inMap := SortedKeys(e.Spec.ReplicaAddressMap); !slices.Equal(inMap, running) {
		return fmt.Sprintf("migration engine %s serves replicas [%s] of the running [%s]: Longhorn restarts it to match",
			e.Name, strings.Join(inMap, " "), strings.Join(running, " ")), false
	}
	return "", false
}
