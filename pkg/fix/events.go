package fix

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/readstate"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/volevents"
)

// Event reasons on the Volume, one per thing fix or the guard did or
// refused to do (docs/observability.md lists them).
const (
	ReasonRepairApplied     = "RepairApplied"
	ReasonRepairVerified    = "RepairVerified"
	ReasonRepairNotVerified = "RepairNotVerified"
	ReasonRepairSuperseded  = "RepairSuperseded"
	ReasonFlagsInverted     = "ReplicaFlagsInverted"
	ReasonRepairFailed      = "RepairFailed"
	ReasonRepairSkipped     = "RepairSkipped"
	ReasonRepairRefused     = "RepairRefused"
)

// EventFlushTimeout bounds how long a command waits at its end for its
// Events to reach the API server.
const EventFlushTimeout = 5 * time.Second

// StartEvents starts recording Events unless they are off (--events=false)
// or nothing is written (any dry run). Without the permission to create
// Events it warns once and returns nil: repairs go on without them.
func StartEvents(ctx context.Context, c *readstate.Client, ns string, on bool, dry cmdutil.DryRun, warn func(string)) *volevents.Recorder {
	if !on || dry != cmdutil.DryRunNone || c == nil || c.Config == nil {
		return nil
	}
	return volevents.Start(ctx, c.Config, ns, warn)
}

// VolumeRef names a volume for its Events; a missing uid is read from the
// API server (kubectl describe matches Events on the uid).
func VolumeRef(ctx context.Context, c *readstate.Client, ns, vol, uid string) volevents.Volume {
	v := volevents.Volume{Namespace: ns, Name: vol, UID: types.UID(uid)}
	if uid == "" && c != nil {
		if u, err := c.Dynamic.Resource(longhorn.Volumes.GVR()).Namespace(ns).Get(ctx, vol, metav1.GetOptions{}); err == nil {
			v.UID = u.GetUID()
		}
	}
	return v
}

// RecordOutcome records the Events of one volume's outcome: the write and
// then its verification, a failure, a skip or a refusal. Outcomes that
// changed nothing and need nothing (healthy, in flight, dry run, not
// attempted) record none. action is the plan's.
func RecordOutcome(rec *volevents.Recorder, v volevents.Volume, action detect.Action, o Outcome) {
	if rec == nil {
		return
	}
	verb := eventAction(action)
	switch o.Result {
	case ResultRepaired, ResultChanged, ResultTimedOut, ResultSuperseded, ResultInverted:
		// Changed names the replicas whose flags were set first, then the
		// engines.
		note := fmt.Sprintf("%s the stale engine; objects written: %s", pastTense(action), strings.Join(o.Changed, ", "))
		switch action {
		case detect.ActionSetReplicas:
			note = "set the replica flags; objects written: " + strings.Join(o.Changed, ", ")
		case detect.ActionClearMigrationNode:
			note = "cleared the stale status.currentMigrationNodeID on the status subresource; objects written: " + strings.Join(o.Changed, ", ")
		}
		if o.Backup != "" {
			note += "; the objects as they were: " + o.Backup
		}
		rec.Record(v, volevents.Normal, ReasonRepairApplied, verb, note)
	}
	switch o.Result {
	case ResultRepaired:
		rec.Record(v, volevents.Normal, ReasonRepairVerified, "Verify", o.Detail)
	case ResultTimedOut:
		rec.Record(v, volevents.Warning, ReasonRepairNotVerified, "Verify", o.Detail)
	case ResultSuperseded:
		rec.Record(v, volevents.Normal, ReasonRepairSuperseded, "Verify", o.Detail)
	case ResultInverted:
		rec.Record(v, volevents.Warning, ReasonFlagsInverted, "Verify", o.Detail+"; recover by hand: see the command's output and docs/troubleshooting-two-active-engines.md")
	case ResultFailed:
		rec.Record(v, volevents.Warning, ReasonRepairFailed, verb, o.Detail)
	case ResultSkipped:
		rec.Record(v, volevents.Normal, ReasonRepairSkipped, verb, o.Detail)
	case ResultRefused:
		rec.Record(v, volevents.Warning, ReasonRepairRefused, verb, o.Detail)
	}
}

// eventAction is an Event's action: what was done (or refused), CamelCase.
func eventAction(a detect.Action) string {
	switch a {
	case detect.ActionDeactivate:
		return "DeactivateEngine"
	case detect.ActionDelete:
		return "DeleteEngine"
	case detect.ActionSetReplicas:
		return "SetReplicaFlags"
	case detect.ActionClearMigrationNode:
		return "ClearMigrationNodeID"
	}
	return "Repair"
}

// recordOutcome is RecordOutcome for fix's own run: the plan names the
// action and the volume's uid, and a refusal says why in full.
func (o *Config) recordOutcome(ctx context.Context, rec *volevents.Recorder, p Planned, out Outcome) {
	if rec == nil {
		return
	}
	if out.Result == ResultRefused && p.Why != "" {
		out.Detail = p.Why
	}
	RecordOutcome(rec, VolumeRef(ctx, o.Settings.Client, o.Settings.Namespace, p.Volume, p.Snapshot.VolumeUID), p.Action, out)
}
