// Package fixwatch implements `kubectl longhorn-engines fix --watch`: an
// upgrade guard that watches a Longhorn namespace for hours (a Harvester
// upgrade drains node after node and live-migrates every VM) and repairs a
// volume that falls into the two-active-engines state (longhorn#6642), or
// is left with active replicas naming a deleted engine (DanglingReplicas),
// once that state has lasted --settle, unchanged.
//
// How it decides:
//   - Informers (client-go dynamic informers) on volumes, engines, replicas,
//     the current-longhorn-version setting and, on 1.5+, volume attachments,
//     in the Longhorn namespace only. They list once, then follow watch
//     events; client-go re-lists and re-watches by itself after a watch
//     expires, the connection drops or the API server restarts. The guard
//     reports those moments and stops on errors retrying cannot fix (RBAC).
//   - Every event queues its volume; one worker classifies it with detect
//     from the informer caches (no request per event). A state fix would
//     repair (MultipleActiveEngines with action deactivate or delete, or
//     DanglingReplicas with action set-replicas) is pinned by a signature:
//     the survivor and the objects fix changes (the stale engines, or the
//     replicas it repoints) by uid, and the action. A timer fires --settle
//     after the signature was first seen; if the signature is still the
//     same, the guard repairs. Any change
//     restarts the wait. A normal confirm that is still cleaning up is
//     PendingCleanup or MigrationFinishing for detect and never has a
//     signature, whatever --settle is.
//   - The repair is fix's Repairer: plan from a fresh read, which is the
//     re-check right before writing (acting only if it matches the settled
//     signature), backup of that read, write with uid/resourceVersion
//     preconditions, wait for Longhorn and verify. A skipped or failed repair is tried again after
//     another settle time, at most three times per state.
//
// Output: one line per event on stdout and progress on stderr, each line
// stamped with an RFC 3339 time (UTC, milliseconds); no terminal escape codes
// unless --color allows them on a terminal. At the end (signal, --for, an
// RBAC error, inverted replica flags) a summary on stderr and an exit code
// that says whether anything stayed unrepaired.
package fixwatch
