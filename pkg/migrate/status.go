package migrate

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Status report identifiers (`migrate status -o json|yaml`).
const (
	StatusAPIVersion = "longhorn-engines/v1alpha1"
	StatusKind       = "MigrationStatus"
)

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
)

// Status is what `migrate status` prints.
type Status struct {
	APIVersion             string                   `json:"apiVersion"`
	Kind                   string                   `json:"kind"`
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
	Next                   []string                 `json:"next,omitempty"`
}

// runStatus prints where the volume's migration stands. Read-only.
func (s *session) runStatus(ctx context.Context) error {
	snap, err := s.read(ctx)
	if err != nil {
		return noCheck(err)
	}
	st := s.status(snap)
	switch s.o.Output {
	case "json":
		b, err := json.MarshalIndent(st, "", "    ")
		if err != nil {
			return err
		}
		s.outf("%s", b)
	case "yaml":
		b, err := json.Marshal(st)
		if err == nil {
			b, err = yaml.JSONToYAML(b)
		}
		if err != nil {
			return err
		}
		fmt.Fprint(s.o.Out, string(b))
	default:
		s.printStatus(st)
	}
	return nil
}

// status decides the phase from one snapshot.
func (s *session) status(snap *snapshot) *Status {
	v := &snap.volume
	st := &Status{
		APIVersion: StatusAPIVersion, Kind: StatusKind, Namespace: s.ns, Volume: v.Name,
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
	switch {
	case hasFinding && f.Severity.NeedsAttention():
		st.Phase, st.Message, st.Finding = PhaseAttention, f.Reason, &f
		if f.Type == detect.TypeMultipleActiveEngines {
			st.Next = append(st.Next, s.commandLine("fix", s.vol, "--dry-run=client"), s.commandLine("fix", s.vol))
		}
	case s.ver.Known() && to != "" && s.drv.pending(snap, to):
		r := checkReady(snap, s.drv, to)
		st.MigrationEngine = r.engine
		started, why := s.drv.started(snap, to)
		switch {
		case r.failed != "":
			st.Phase, st.Message = PhaseFailing, fmt.Sprintf("migration from %s to %s: %s; Longhorn reverts it", orNone(v.Spec.NodeID), to, r.failed)
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
		st.Next = append(st.Next, s.commandLine("migrate", "confirm", s.vol), s.commandLine("migrate", "rollback", s.vol))
	case v.Migrating() || (hasFinding && (f.Type == detect.TypeMigrationFinishing || f.Type == detect.TypePendingCleanup)):
		st.Phase = PhaseFinishing
		st.Message = "Longhorn is finishing a confirm or rollback"
		if hasFinding {
			st.Message = f.Reason
		}
	default:
		st.Phase = PhaseNone
		st.Message = fmt.Sprintf("no migration; the volume is %s", orText(v.Status.State, "in no state"))
		if v.Status.CurrentNodeID != "" {
			st.Message += " on " + v.Status.CurrentNodeID
		}
		if hasFinding {
			st.Message += "; " + f.Reason
		}
	}
	return st
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
	if len(st.Next) > 0 {
		p("Next:")
		for _, n := range st.Next {
			p("  %s", n)
		}
	}
}

// columns prints rows aligned.
func (s *session) columns(rows [][]string) {
	width := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-len(c)+3))
			}
		}
		s.outf("%s", b.String())
	}
}

func dash(s string) string { return orText(s, "-") }
