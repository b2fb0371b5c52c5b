package fix

import (
	"fmt"
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Write is one write of a plan, as the operator is told about it before it
// happens: the object, the kubectl-style verb of its change line, and the
// fields written with their values before and after.
type Write struct {
	Resource longhorn.Resource
	Name     string
	// Verb is the past tense of the change line ("activated", "deleted").
	Verb string
	// Fields says exactly what is written, e.g. "spec.active: false -> true".
	Fields string
}

// Writes lists the plan's writes for one volume in the order the repair
// makes them: the replica writes first, in the plan's order, then the
// engine writes once the replicas re-read as written (act in repair.go).
// Every description of a plan (the plan table, --dry-run=client, the
// server dry run's line) is made from this list, so none can leave out or
// reorder a write the repair makes.
func (p Planned) Writes() []Write {
	if !p.Acts() {
		return nil
	}
	if p.VolumeWrite() {
		return []Write{p.migrationNodeWrite()}
	}
	var ws []Write
	for _, w := range p.Replicas {
		var fields []string
		if w.Active != w.ToActive {
			fields = append(fields, fmt.Sprintf("spec.active: %t -> %t", w.Active, w.ToActive))
		}
		if w.EngineName != w.ToEngine {
			fields = append(fields, fmt.Sprintf("spec.engineName: %s -> %s", w.EngineName, w.ToEngine))
		}
		if len(fields) == 0 {
			fields = append(fields, fmt.Sprintf("spec.active: %t, spec.engineName: %s (unchanged)", w.ToActive, w.ToEngine))
		}
		ws = append(ws, Write{Resource: longhorn.Replicas, Name: w.Name, Verb: replicaChangeText(w), Fields: strings.Join(fields, ", ")})
	}
	if p.EngineWrites() {
		for _, e := range p.Stale {
			w := Write{Resource: longhorn.Engines, Name: e.Name, Verb: pastTense(p.Action)}
			switch p.Action {
			case detect.ActionDelete:
				w.Fields = "deleted (uid " + e.UID + ")"
			default:
				w.Fields = "spec.active: true -> false"
			}
			ws = append(ws, w)
		}
	}
	return ws
}

// writeNames is the names of the writes, in order, for an outcome.
func writeNames(ws []Write) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Name
	}
	return out
}

// writesPhrase says exactly what the writes are, in order, on one line:
// "replica a (spec.active: false -> true), engine e (spec.active: true -> false)".
func writesPhrase(ws []Write) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = fmt.Sprintf("%s %s (%s)", strings.ToLower(w.Resource.Kind), w.Name, w.Fields)
	}
	return strings.Join(parts, ", ")
}
