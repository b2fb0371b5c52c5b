package migrate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// StatusKind is the kind of `migrate status -o json|yaml`'s report
// (cmdutil.ReportAPIVersion is its version).
const StatusKind = "MigrationStatus"

// Phase is where a migration stands.
type Phase string

const (
	// PhaseNone: no migration; the volume is where it is.
	PhaseNone Phase = "None"
	// PhaseRequested: a start is in place that Longhorn has not acted on.
	PhaseRequested Phase = "Requested"
	// PhasePreparing: started; the migration engine is not ready yet.
	PhasePreparing Phase = "Preparing"
	// PhaseReady: safe to confirm.
	PhaseReady Phase = "Ready"
	// PhaseFailing: Longhorn will revert (an engine failed).
	PhaseFailing Phase = "Failing"
	// PhaseFinishing: a confirm or rollback Longhorn is still finishing.
	PhaseFinishing Phase = "Finishing"
	// PhaseAttention: a state that needs a person (detect's finding says which).
	PhaseAttention Phase = "NeedsAttention"
	// PhaseCrashDetached: Longhorn 1.7+ detached the volume after the
	// migration's source engine or node was lost and waits for one of the
	// two csi-attacher tickets to be removed.
	PhaseCrashDetached Phase = "CrashDetached"
)

// Status is what `migrate status` prints.
type Status struct {
	cmdutil.ReportMeta
	Namespace              string                   `json:"namespace"`
	Volume                 string                   `json:"volume"`
	LonghornVersion        string                   `json:"longhornVersion"`
	Mechanism              string                   `json:"mechanism"`
	Phase                  Phase                    `json:"phase"`
	Message                string                   `json:"message"`
	NodeID                 string                   `json:"nodeID"`
	CurrentNodeID          string                   `json:"currentNodeID"`
	MigrationNodeID        string                   `json:"migrationNodeID"`
	CurrentMigrationNodeID string                   `json:"currentMigrationNodeID,omitempty"`
	Target                 string                   `json:"target,omitempty"`
	MigrationEngine        string                   `json:"migrationEngine,omitempty"`
	Waiting                []string                 `json:"waiting,omitempty"`
	Finding                *detect.Finding          `json:"finding,omitempty"`
	Engines                []detect.EngineEvidence  `json:"engines"`
	Replicas               []detect.ReplicaEvidence `json:"replicas"`
	Tickets                []detect.TicketEvidence  `json:"attachmentTickets,omitempty"`
	// LonghornNext says what Longhorn will do next by itself.
	LonghornNext string `json:"longhornNext,omitempty"`
	// Next are the commands the operator may safely run now, in order of
	// preference; Avoid says what not to do, and why.
	Next  []string `json:"next,omitempty"`
	Avoid string   `json:"avoid,omitempty"`
}

// runStatus prints where the volume's migration stands. Read-only.
func (s *session) runStatus(ctx context.Context, output string) error {
	snap, err := s.read(ctx)
	if err != nil {
		return noCheck(err)
	}
	st := s.status(ctx, snap)
	switch output {
	case "json":
		return cmdutil.PrintJSON(s.o.Out, st)
	case "yaml":
		return cmdutil.PrintYAML(s.o.Out, st)
	default:
		s.printStatus(st)
	}
	return nil
}

// status decides the phase from one snapshot.
func (s *session) status(ctx context.Context, snap *snapshot) *Status {
	v := &snap.volume
	st := &Status{
		ReportMeta: cmdutil.NewReportMeta(StatusKind), Namespace: s.ns, Volume: v.Name,
		LonghornVersion: s.ver.String(), Mechanism: s.drv.mechanism(),
		NodeID: v.Spec.NodeID, CurrentNodeID: v.Status.CurrentNodeID,
		MigrationNodeID: v.Spec.MigrationNodeID, CurrentMigrationNodeID: v.Status.CurrentMigrationNodeID,
	}
	f, hasFinding := snap.classify(s.ns)
	st.Engines, st.Replicas, st.Tickets = engineEvidence(snap), replicaEvidence(snap), ticketEvidence(snap)

	to := migrationTarget(snap)
	st.Target = to
	if !s.ver.Known() {
		st.Mechanism = "unknown (the Longhorn version is not known)"
	}
	src, tgt := snap.withoutNode()
	pending := s.ver.Known() && to != "" && s.drv.pending(snap, to)
	var r readiness
	if pending {
		r = checkReady(snap, s.drv, to)
	}
	// A migration whose serving engine failed is a warning of scan's too;
	// the Failing phase below says more (Longhorn reverts it).
	failing := hasFinding && f.Type == detect.TypeMigrationInFlight && r.failed != ""
	// So is one Longhorn is about to confirm itself on 1.12 (its clean-up
	// hazard): the in-flight advice says what Longhorn does next.
	confirming := hasFinding && f.Type == detect.TypeMigrationInFlight && pending && selfConfirming(s.ver, snap, v.Spec.NodeID, to)
	switch {
	case snap.crashDetached() != nil:
		s.crashDetachedStatus(ctx, st, snap.crashDetached())
		if hasFinding {
			st.Finding = &f
		}
	case src != "":
		st.Phase, st.Message = PhaseAttention, (&withoutNodeError{version: snap.version, source: src, target: tgt}).Error()
		st.LonghornNext = "nothing: it waits for the csi-attacher ticket of " + tgt + " to be removed"
		st.Next = []string{s.commandLine("migrate", "rollback", s.vol)}
		if hasFinding {
			st.Finding = &f
		}
	case hasFinding && f.Severity.NeedsAttention() && !failing && !confirming:
		st.Phase, st.Message, st.Finding = PhaseAttention, f.Reason, &f
		st.LonghornNext = "nothing that resolves it: the state lasts until a person acts"
		switch {
		case fixRepairs(f):
			st.Next = append(st.Next, s.commandLine("fix", s.vol, "--dry-run=client"), s.commandLine("fix", s.vol))
		case f.Family != nil:
			st.Next = append(st.Next, f.Family.Steps...)
		}
	case pending:
		st.MigrationEngine = r.engine
		started, why := s.drv.started(snap, to)
		switch {
		case r.failed != "":
			st.Phase, st.Message = PhaseFailing, fmt.Sprintf("migration from %s to %s: %s; Longhorn reverts it", orNone(v.Spec.NodeID), to, r.failed)
			if hasFinding {
				st.Finding = &f
			}
		case r.ready:
			st.Phase, st.Message = PhaseReady, fmt.Sprintf("migration from %s to %s is ready to confirm; the volume serves I/O from %s", v.Spec.NodeID, to, v.Spec.NodeID)
		case !started:
			st.Phase, st.Message = PhaseRequested, fmt.Sprintf("migration from %s to %s requested, Longhorn has not started it: %s", orNone(v.Spec.NodeID), to, why)
		default:
			st.Phase, st.Message = PhasePreparing, fmt.Sprintf("migration from %s to %s started; the migration engine is not ready", v.Spec.NodeID, to)
		}
		if !r.ready {
			st.Waiting = r.missing
		}
		if confirming {
			st.Finding = &f
		}
		s.inFlightAdvice(ctx, st, snap, r, started, to)
	case v.Migrating() || (hasFinding && (f.Type == detect.TypeMigrationFinishing || f.Type == detect.TypePendingCleanup)):
		st.Phase = PhaseFinishing
		st.Message = "Longhorn is finishing a confirm or rollback"
		if hasFinding {
			st.Message = f.Reason
		}
		st.LonghornNext = "finishes it: removes the extra engine and its replicas and keeps the volume on spec.nodeID"
		st.Next = []string{"wait, then: " + s.commandLine("migrate", "status", s.vol)}
		st.Avoid = "starting another migration or deleting engines or replicas while Longhorn finishes"
	default:
		st.Phase = PhaseNone
		st.Message = fmt.Sprintf("no migration; the volume is %s", orText(v.Status.State, "in no state"))
		if v.Status.CurrentNodeID != "" {
			st.Message += " on " + v.Status.CurrentNodeID
		}
		if hasFinding {
			st.Message += "; " + f.Reason
		}
		st.LonghornNext = "nothing: no migration is requested"
		if v.Status.State == longhorn.VolumeStateAttached && v.Spec.Migratable {
			st.Next = []string{s.commandLine("migrate", s.vol, "--to", "NODE")}
		}
	}
	return st
}

// inFlightAdvice says, for a migration in flight, what Longhorn does next by
// itself and what the operator may safely do, from the phase and whether
// the source and target nodes are Ready (longhorn-tests' node-down and
// engine-crash suites are the reference for each).
func (s *session) inFlightAdvice(ctx context.Context, st *Status, snap *snapshot, r readiness, started bool, to string) {
	from := snap.volume.Spec.NodeID
	confirm, rollback := s.commandLine("migrate", "confirm", s.vol), s.commandLine("migrate", "rollback", s.vol)
	srcUp, _ := s.nodeUp(ctx, from)
	tgtUp, _ := s.nodeUp(ctx, to)
	switch {
	case selfConfirming(s.ver, snap, from, to):
		st.LonghornNext = fmt.Sprintf("confirms the migration to %s by itself: no csi-attacher ticket is left on %s, so the workload has left it", to, from)
		if s.ver.MigrationNeedsReadyTarget() {
			st.LonghornNext += fmt.Sprintf(" (once %s is Ready)", to)
		}
		st.Next = []string{"wait, then: " + s.commandLine("migrate", "status", s.vol)}
		st.Avoid = fmt.Sprintf("rolling back: it would remove the last csi-attacher ticket and detach the volume from its workload on %s", to)
	case !srcUp && !tgtUp:
		st.LonghornNext = "waits: neither node is Ready"
		st.Next = []string{"wait for a node to return, then: " + s.commandLine("migrate", "status", s.vol)}
		st.Avoid = "confirming or rolling back: either waits for a node that is down"
	case !srcUp:
		st.LonghornNext = fmt.Sprintf("reverts the migration engine while the serving engine on %s is not running; the volume does not serve I/O until it is confirmed toward %s or %s returns", from, to, from)
		st.Next = []string{confirm}
		st.Avoid = fmt.Sprintf("rolling back: the volume would wait for %s, which is down", from)
	case !tgtUp:
		st.LonghornNext = fmt.Sprintf("keeps serving from %s; the migration engine on %s cannot run", from, to)
		st.Next = []string{rollback}
		st.Avoid = fmt.Sprintf("confirming: the volume would wait for %s, which is down", to)
		if s.ver.TicketLimits() {
			st.Avoid += fmt.Sprintf(" (Longhorn %s detaches the volume entirely)", s.ver)
		}
	case r.failed != "":
		st.LonghornNext = "reverts the migration: deletes the migration engine and its replicas"
		if s.ver.TicketLimits() {
			st.LonghornNext += fmt.Sprintf("; if the serving engine crashed, Longhorn %s detaches the volume and waits for one csi-attacher ticket to be removed", s.ver)
		}
		st.Next = []string{"wait, then: " + s.commandLine("migrate", "status", s.vol), rollback}
		st.Avoid = "confirming: the migration is not ready"
	case r.recreating != "":
		st.LonghornNext = "replaces the migration engine in error with a new one and prepares it again; the volume keeps serving from " + from
		st.Next = []string{"wait, then: " + s.commandLine("migrate", "status", s.vol), rollback}
		st.Avoid = "confirming before the new migration engine is ready"
	case r.ready:
		st.LonghornNext = fmt.Sprintf("nothing more: the volume serves I/O from %s until a confirm or a rollback", from)
		st.Next = []string{confirm, rollback}
	case !started:
		st.LonghornNext = "starts the migration when its start conditions hold"
		st.Next = []string{"wait, then: " + s.commandLine("migrate", "status", s.vol), rollback}
	default:
		st.LonghornNext = fmt.Sprintf("prepares the migration engine on %s (clones the replicas, starts it); it never confirms by itself", to)
		st.Next = []string{confirm + "  (waits for readiness first)", rollback}
		st.Avoid = "confirming through Kubernetes or by hand before the migration engine is ready"
	}
	if s.ver.ReplicaDeleteIgnoresConflict() {
		confirmCleanupAdvice(st, s.ver, confirm, rollback)
	}
}

// selfConfirming: from 1.5 the VolumeAttachment controller confirms a
// migration as soon as no csi-attacher ticket is left on the source and one
// is on the target (Longhorn 1.12.0 and 1.10.0, explorer seed 33 state 6);
// a rollback then removes the last ticket.
func selfConfirming(ver longhorn.Version, snap *snapshot, from, to string) bool {
	return ver.HasVolumeAttachments() && snap.va != nil && from != "" &&
		len(snap.csiTicketsOn(from)) == 0 && len(snap.csiTicketsOn(to)) > 0
}

// confirmCleanupAdvice: on a release whose confirm clean-up can wipe the
// migrated replicas' directories, a rollback, where it is offered, is the
// safe way out, and no confirm is, whoever sends it.
func confirmCleanupAdvice(st *Status, ver longhorn.Version, confirm, rollback string) {
	hazard := fmt.Sprintf("a confirm by any means (this tool, Harvester, the CSI driver): Longhorn %s's clean-up after it can delete the old replicas while they are stored active and remove the data directories the migrated engine uses (%s)", ver, docs.ConfirmCleanup)
	switch {
	case slices.Contains(st.Next, rollback):
		st.Next = slices.DeleteFunc(st.Next, func(n string) bool { return strings.HasPrefix(n, confirm) })
	case slices.ContainsFunc(st.Next, func(n string) bool { return strings.HasPrefix(n, confirm) }):
		hazard = "without a rollback to offer, the confirm above is the way out, but know that " + hazard
	default:
		hazard = "nothing more can be done from here, and Longhorn's own confirm is exposed too: " + hazard
	}
	if st.Avoid != "" {
		st.Avoid += "; "
	}
	st.Avoid += hazard
}

func engineEvidence(s *snapshot) []detect.EngineEvidence {
	out := make([]detect.EngineEvidence, 0, len(s.engines))
	for i := range s.engines {
		e := &s.engines[i]
		ee := detect.EngineEvidence{
			Name: e.Name, NodeID: e.Spec.NodeID, Active: e.Spec.Active, State: e.Status.CurrentState,
			DesireState: e.Spec.DesireState, Endpoint: e.Status.Endpoint, RWReplicas: e.RWCount(),
			InstanceManager: e.Status.InstanceManagerName, Image: e.ImageName(), OwnerID: e.Status.OwnerID,
			Created: e.CreationTimestamp.UTC(),
		}
		if e.DeletionTimestamp != nil {
			t := e.DeletionTimestamp.UTC()
			ee.DeletionTimestamp = &t
		}
		out = append(out, ee)
	}
	return out
}

func replicaEvidence(s *snapshot) []detect.ReplicaEvidence {
	out := make([]detect.ReplicaEvidence, 0, len(s.replicas))
	for _, r := range s.replicas {
		out = append(out, detect.ReplicaEvidence{Name: r.Name, NodeID: r.Spec.NodeID, EngineName: r.Spec.EngineName,
			Active: r.Spec.Active, State: r.Status.CurrentState, DataDirectory: r.Spec.DataDirectoryName})
	}
	return out
}

func ticketEvidence(s *snapshot) []detect.TicketEvidence {
	if s.va == nil {
		return nil
	}
	var out []detect.TicketEvidence
	for _, id := range longhorn.SortedKeys(s.va.Spec.AttachmentTickets) {
		t := s.va.Spec.AttachmentTickets[id]
		out = append(out, detect.TicketEvidence{ID: id, Type: t.Type, NodeID: t.NodeID, Satisfied: s.va.Satisfied(id)})
	}
	return out
}

// printStatus is the text form.
func (s *session) printStatus(st *Status) {
	p := func(format string, args ...any) { s.outf(format, args...) }
	p("Volume:     %s (namespace %s, Longhorn %s)", st.Volume, st.Namespace, st.LonghornVersion)
	p("Phase:      %s", st.Phase)
	p("Message:    %s", st.Message)
	mig := fmt.Sprintf("spec.migrationNodeID=%s", dash(st.MigrationNodeID))
	if s.ver.HasCurrentMigrationNodeID() {
		mig += fmt.Sprintf("  status.currentMigrationNodeID=%s", dash(st.CurrentMigrationNodeID))
	}
	p("Node:       spec.nodeID=%s  status.currentNodeID=%s", dash(st.NodeID), dash(st.CurrentNodeID))
	p("Migration:  %s  (through %s)", mig, st.Mechanism)
	if len(st.Waiting) > 0 {
		p("Waiting for:")
		for _, w := range st.Waiting {
			p("  - %s", w)
		}
	}
	p("Engines:")
	rows := [][]string{{"  NAME", "NODE", "ACTIVE", "STATE", "RW", "ENDPOINT"}}
	for _, e := range st.Engines {
		active := fmt.Sprint(e.Active)
		if e.DeletionTimestamp != nil {
			active += ",deleting"
		}
		rows = append(rows, []string{"  " + e.Name, dash(e.NodeID), active, dash(e.State), fmt.Sprint(e.RWReplicas), dash(e.Endpoint)})
	}
	s.columns(rows)
	p("Replicas:")
	rows = [][]string{{"  NAME", "NODE", "ENGINE", "ACTIVE", "STATE"}}
	for _, r := range st.Replicas {
		rows = append(rows, []string{"  " + r.Name, dash(r.NodeID), dash(r.EngineName), fmt.Sprint(r.Active), dash(r.State)})
	}
	s.columns(rows)
	if st.Tickets != nil {
		p("Attachment tickets:")
		rows = [][]string{{"  ID", "TYPE", "NODE", "SATISFIED"}}
		for _, t := range st.Tickets {
			rows = append(rows, []string{"  " + t.ID, t.Type, dash(t.NodeID), fmt.Sprint(t.Satisfied)})
		}
		s.columns(rows)
	}
	if st.LonghornNext != "" {
		p("Longhorn:   %s", st.LonghornNext)
	}
	if st.Avoid != "" {
		p("Avoid:      %s", st.Avoid)
	}
	if len(st.Next) > 0 {
		p("Next:")
		for _, n := range st.Next {
			p("  %s", n)
		}
	}
}

// columns prints rows aligned (tabwriter counts characters, not bytes).
func (s *session) columns(rows [][]string) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 3, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush()
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		s.outf("%s", line)
	}
}

func dash(s string) string { return orText(s, "-") }
