// Package lhreal runs Longhorn's own controllers, per release, against a
// testcluster API server (test support only).
//
// The controllers are the unmodified VolumeController (and from v1.5 the
// VolumeAttachmentController) of the longhorn-manager module, built from one
// nested Go module per release under test/longhorn/ into a binary
// longhorn-controllers-<release>. The binary runs one controller per node
// (controllerID = node, as one longhorn-manager per node would), sharing one
// DataStore; kube objects (core/v1 Nodes, Pods, PVs, …) come from a fake
// clientset inside the binary, seeded with a Ready core/v1 Node per node.
// No instance manager runs: engine and replica process status is whatever
// the test (or lhsim's instance layer) writes.
//
// The API server must serve the release's own CRDs (CRDs, then
// testcluster.Options{CRDYAML: ...}): the DataStore's informers watch every
// Longhorn resource, not only volumes, engines and replicas.
//
// What the volume controller needs before it acts (Seed creates it):
//   - Setting default-engine-image set (syncVolume fails with "setting
//     default-engine-image is empty" otherwise) and an EngineImage named
//     ei-<first 8 hex of sha512(image)> with status.state "deployed" and
//     status.nodeDeploymentMap true for each node: ownership
//     (isResponsibleFor), attach and migration check engine image readiness
//     on the nodes involved.
//   - A Longhorn Node per node with condition Ready True (else
//     IsNodeDownOrDeletedOrMissingManager hands the volume to another
//     controller) and, for replica scheduling, a schedulable disk.
//     Controllers.SetKubeNodeReady(node, false) powers the node off as far
//     as the binary goes: its fake kube Node turns NotReady and the node's
//     controllers stop (a powered-off node runs no longhorn-manager); true
//     starts new ones. It does not change the Longhorn Node: the Longhorn
//     node controller, which would copy the condition, does not run; write
//     the Longhorn Node's condition as well (lhsim's SetNodeReady).
//
// What Longhorn's admission webhooks would add and tests must add
// themselves on objects they create by hand: the "longhorn.io" finalizer on
// Volumes, Engines and Replicas, the longhornvolume label on Engines and
// Replicas, and Volume spec defaults. Objects the controllers create carry
// the finalizer and label already (datastore Create*).
package lhreal
