// Package lhsim simulates longhorn-manager's controllers against a real
// Kubernetes API server (internal/testcluster), so that kubectl
// longhorn-engines can be tested on the same custom resources Longhorn
// would write, release by release, including the two-active-engines bug
// (longhorn/longhorn#6642) and what happens after a repair.
//
// # Use
//
//	s, err := lhsim.New(cluster.RESTConfig(), lhsim.Options{Namespace: ns, Version: "v1.4.3"})
//	err = s.Start(ctx)            // writes Setting current-longhorn-version, starts the controllers
//	defer s.Stop()
//	err = s.AddNode(ctx, "node-a", lhsim.NodeOptions{})
//	err = s.CreateVolume(ctx, "vol", lhsim.VolumeOptions{Migratable: true, ReplicaNodes: []string{"node-a", "node-b"}})
//	err = s.Attach(ctx, "vol", "node-a")   // what CSI does
//	err = s.WaitFor(ctx, "vol", func(v *longhorn.Volume, es []longhorn.Engine, rs []longhorn.Replica) bool { … })
//
// Use one simulator per namespace (tests use a namespace each; the test
// server accepts any namespace name). The simulator tolerates objects it
// did not create and changes made by other clients at any time; a test that
// builds a state by hand should create engines and replicas before their
// Volume (or before Start), or the volume controller may create its own.
//
// # What is simulated
//
// One worker drains one rate-limited work queue fed by dynamic informers on
// the namespace (no timers: every reconcile follows a watch event, a retry
// after an error, or ClearFault). Controllers read from the informer caches,
// as longhorn-manager does, and every write waits until the cache reflects
// it, so a sync never acts on its own stale data. Writes are Updates with
// resourceVersion; a conflict requeues.
//
//   - Instance handling of engines and replicas: desireState running with a
//     nodeID (and, for an engine, a running replica) → currentState running
//     with ownerID, instanceManagerName, ip, storageIP, port, endpoint
//     (/dev/longhorn/<vol> for blockdev), currentImage, replicaModeMap (RW
//     for running replicas of replicaAddressMap, ERR otherwise) and snapshots
//     (a volume-head entry, the same key set on every engine); stopped →
//     stopped with those fields cleared. A process table feeds the instance
//     managers' status: status.instances of instance-manager-e-/-r-<hash> up
//     to 1.4, status.instanceEngines/instanceReplicas of the aio
//     instance-manager-<hash> from 1.5.
//   - Engine deletion: the process is removed (or left as an orphan), then
//     the longhorn.io finalizer. Replica deletion: the replica controller's
//     data clean-up — deleting an active replica wipes its data directory
//     even when a migration clone shares it (all releases); from 1.5.3 an
//     inactive replica that is the only user of its directory is wiped too.
//     Wiped directories are recorded (WipedDirs, DataLost).
//   - Volume controller (syncVolume): ReconcileEngineReplicaState,
//     processMigration, ReconcileVolumeState (attach/detach, the first
//     engine and the replicas of a new volume, reattach after an engine
//     crash), cleanupCorruptedOrStaleReplicas' removal of inactive replicas
//     (not while migrating; from 1.5 "migrating" includes
//     status.currentMigrationNodeID), and the deferred save of changed
//     replica specs, then engine specs, then the volume status, which runs
//     even after a step returned early with an error and, as in Longhorn,
//     replaces that error with the result of the status write.
//     GetCurrentEngineAndExtras looks at spec.active only, never at
//     deletionTimestamp, so two active engines fail every sync with
//     "BUG: found the second active engine <b> besides <a>" (names in
//     name order). Migration follows Longhorn's own steps per release: the
//     migration engine (inactive, unplaced) and clone replicas (same data
//     directory, inactive, spec copied from the original), placement on
//     the target once the clones run, readiness, the revert cases, and the
//     confirm/rollback branch with the affected ordering (≤1.4.3, 1.3.x,
//     1.5.0–1.5.1: the new engine is marked active in memory before the old
//     one is deleted) or the fixed one (1.4.4, 1.5.2+: activated after), the
//     replica flip (from 1.5.3 only replicas with healthyAt), and clearing
//     status.currentMigrationNodeID (1.5+).
//   - VolumeAttachment controller (1.5+): one VolumeAttachment per volume;
//     tickets drive spec.nodeID; two csi-attacher tickets start a migration
//     (from 1.11.3/1.12.1 only towards a Ready node); removing the current
//     node's ticket confirms it once the migration engine's snapshot keys
//     match (1.7+: and it is available); removing the target's ticket rolls
//     it back; direct writes of spec.nodeID/migrationNodeID without a ticket
//     are undone. Ticket statuses (satisfied, Satisfied condition,
//     generation) follow Longhorn's messages. The mutating webhook's ticket
//     generation bookkeeping is emulated after the fact (an extra update).
//   - Attach/Detach are what the CSI driver does: the REST API's
//     attach/detach semantics up to 1.4 (spec.nodeID / spec.migrationNodeID,
//     including "migration is not ready yet"), csi-attacher tickets from 1.5
//     (with the 1.7 webhook's ticket-count rules).
//
// # Where the BUG error is recorded
//
// There is no Events API on the test server, and real Longhorn writes the
// error nowhere on its objects, so neither does the simulator (a write per
// failed sync would also change resourceVersions under the plugin's feet).
// Every failed volume sync is instead
//   - logged like longhorn-manager's handleErr, in the format of the
//     release (1.4.3: level=warning msg="Error syncing Longhorn volume
//     <ns>/<vol>" controller=longhorn-volume error="failed to sync <ns>/<vol>:
//     failed to reconcile engine/replica state for <vol>: BUG: found the
//     second active engine …" node=<volume ownerID>; 1.5.0/1.5.1: level=error
//     msg="Failed to sync Longhorn volume <ns>/<vol>"; fixed releases:
//     msg="Failed to sync Longhorn volume" Volume=<ns>/<vol> …), retried
//     three times and then dropped ("Dropping Longhorn volume … out of the
//     queue") until the next event, so it repeats without a write loop. The
//     lines go to Options.Logf and are kept for Logs(vol);
//   - kept as text for SyncErrors(vol), counted by SyncErrorCount(vol), and
//     the latest sync's outcome is LastSyncError(vol) ("" once a sync
//     succeeds).
//
// # Faults
//
// Inject a Fault (kinds FailEngineDelete, FailEngineUpdate, FinalizerStuck,
// MigrationEngineNeverReady, EngineCrash, OrphanProcess, HoldVolumeSync,
// CloneTwice), aimed at a volume and an engine name or role
// (RoleOld/RoleNew), for a number of times or
// until ClearFault/ClearFaults (which resync everything). FailEngineDelete
// on RoleOld before a confirm produces #6642 on affected releases; on fixed
// releases the controller keeps the old engine the only active one and
// retries until the delete succeeds.
//
// # Not simulated
//
// Scheduling beyond "one replica per listed or schedulable node",
// rebuilding and replenishment, salvage, restore/DR, expansion, engine
// upgrades, share managers (non-migratable rwx volumes), snapshots beyond
// volume-head, v2 data engine specifics (switchover, EngineFrontend),
// backups, recurring jobs, Kubernetes objects (PV/PVC, pods, storage.k8s.io
// VolumeAttachments) and admission webhooks other than the ticket rules.
package lhsim
