package progress

import (
	"strings"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Engines is the volume's engines as a progress line shows them, oldest
// first as given: "e-1@node-b(active,running) e-0@node-a(inactive,stopped)".
// Only engines of vol count; the volume's name prefix is left out.
func Engines(vol string, es []longhorn.Engine) string {
	var parts []string
	for i := range es {
		e := &es[i]
		if e.Spec.VolumeName != "" && e.Spec.VolumeName != vol {
			continue
		}
		name := strings.TrimPrefix(e.Name, vol+"-")
		flags := "inactive"
		if e.Spec.Active {
			flags = "active"
		}
		if e.DeletionTimestamp != nil {
			flags += ",deleting"
		}
		state := e.Status.CurrentState
		if state == "" {
			state = "-"
		}
		node := e.Spec.NodeID
		if node == "" {
			node = "-"
		}
		parts = append(parts, name+"@"+node+"("+flags+","+state+")")
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
