package scan

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Describe prints one kubectl-describe-style block per named volume: what
// Longhorn says about its nodes, every engine and replica, the attachment
// tickets, each precondition with the value that decided it, the decision,
// the command that would repair it and, from a bundle, the log evidence.
// res carries the findings (with log evidence) of the same state. width is
// the terminal's column count: Why wraps to it; 0 (a pipe, a file) keeps it
// on one line.
func Describe(out io.Writer, st *longhorn.State, res detect.Result, names []string, p cmdutil.Painter, width int) error {
	byVolume := map[string]*detect.Finding{}
	for i := range res.Findings {
		f := &res.Findings[i]
		if _, seen := byVolume[f.Volume]; !seen {
			byVolume[f.Volume] = f
		}
	}
	var b bytes.Buffer
	for i, name := range names {
		ev, _, _, ok := detect.Describe(st, name, detect.Options{})
		if !ok {
			return fmt.Errorf("volume %q not found in namespace %q", name, st.Namespace)
		}
		f := byVolume[name]
		if f != nil {
			ev = f.Evidence
		}
		if i > 0 {
			b.WriteString("\n")
		}
		describeVolume(&b, st, name, &ev, f, p, width)
	}
	_, err := out.Write(b.Bytes())
	return err
}

func describeVolume(b *bytes.Buffer, st *longhorn.State, name string, ev *detect.Evidence, f *detect.Finding, p cmdutil.Painter, width int) {
	kv := func(indent int, key, value string) {
		fmt.Fprintf(b, "%s%-*s%s\n", strings.Repeat(" ", indent), keyWidth-indent, key+":", value)
	}
	kv(0, "Name", name)
	kv(0, "Namespace", st.Namespace)
	if k := ev.Kubernetes; k != nil {
		if pvc := pvcOf(k); pvc != "" {
			kv(0, "PVC", pvc)
		}
		if w := workloadOf(k); w != "" {
			kv(0, "Used by", w)
		}
	}
	kv(0, "Longhorn", fmt.Sprintf("%s (%s)", orUnknown(st.Version.String()), detect.ReleaseWords(st.Version)))
	kv(0, "State", strings.Join(nonEmpty(ev.VolumeState, ev.Robustness), ", "))
	access := orText(ev.AccessMode, "-")
	if ev.Migratable {
		access += ", migratable"
	}
	kv(0, "Access mode", access)
	if ev.DataEngine != "" && ev.DataEngine != longhorn.DataEngineV1 {
		kv(0, "Data engine", ev.DataEngine)
	}

	b.WriteString("Nodes:\n")
	kv(2, "spec.nodeID", orText(ev.NodeID, "<empty>"))
	kv(2, "status.currentNodeID", orText(ev.CurrentNodeID, "<empty>"))
	kv(2, "spec.migrationNodeID", orText(ev.MigrationNodeID, "<empty>"))
	if st.Version.HasCurrentMigrationNodeID() || ev.CurrentMigrationNodeID != "" {
		kv(2, "status.currentMigrationNodeID", orText(ev.CurrentMigrationNodeID, "<empty>"))
	}
	if ev.EngineNodeID != "" {
		kv(2, "spec.engineNodeID", ev.EngineNodeID)
	}
	if ev.CurrentEngineNodeID != "" {
		kv(2, "status.currentEngineNodeID", ev.CurrentEngineNodeID)
	}
	if ev.SwitchoverState != "" {
		kv(2, "status.switchoverState", ev.SwitchoverState)
	}
	kv(2, "status.ownerID", orText(ev.OwnerID, "<empty>"))

	roles := map[string]string{}
	b.WriteString("Engines:\n")
	if len(ev.Engines) == 0 {
		b.WriteString("  <none>\n")
	} else {
		t := &table{}
		v2 := len(ev.EngineFrontends) > 0
		heads := []string{"NAME", "ROLE", "NODE", "ACTIVE", "STATE", "ENDPOINT", "RW", "AGE"}
		if v2 {
			// What an engine frontend connects to (a v2 volume's engine has no endpoint).
			heads[5] = "ADDRESS"
		}
		for _, h := range heads {
			t.column(h, nil)
		}
		for _, e := range ev.Engines {
			role := engineRole(ev, e)
			roles[e.Name] = role
			active := fmt.Sprint(e.Active)
			if e.DeletionTimestamp != nil {
				active += " (deleting " + age(st.Now, *e.DeletionTimestamp) + ")"
			}
			end := e.Endpoint
			if v2 {
				end = e.Address
			}
			t.row([]string{e.Name, role, dash(e.NodeID), active, dash(e.State), dash(end), fmt.Sprint(e.RWReplicas), age(st.Now, e.Created)},
				[]func(string) string{nil, rolePaint(p, role)})
		}
		indented(b, t)
	}

	if st.Version.HasEngineFrontends() || len(ev.EngineFrontends) > 0 {
		if ev.DataEngine == longhorn.DataEngineV2 || len(ev.EngineFrontends) > 0 {
			b.WriteString("Engine frontends:\n")
			if len(ev.EngineFrontends) == 0 {
				b.WriteString("  <none>\n")
			} else {
				t := &table{}
				for _, h := range []string{"NAME", "ROLE", "NODE", "ACTIVE", "STATE", "ENGINE", "CONNECTED-TO", "AGE"} {
					t.column(h, nil)
				}
				for _, ef := range ev.EngineFrontends {
					active := fmt.Sprint(ef.Active)
					if ef.DeletionTimestamp != nil {
						active += " (deleting " + age(st.Now, *ef.DeletionTimestamp) + ")"
					}
					t.row([]string{ef.Name, dash(ef.Role), dash(ef.NodeID), active, dash(ef.State), dash(ef.EngineName), dash(ef.ConnectedTo), age(st.Now, ef.Created)},
						[]func(string) string{nil, rolePaint(p, ef.Role)})
				}
				indented(b, t)
			}
		}
	}

	b.WriteString("Replicas:\n")
	if len(ev.Replicas) == 0 {
		b.WriteString("  <none>\n")
	} else {
		t := &table{}
		for _, h := range []string{"NAME", "NODE", "ENGINE", "SET", "ACTIVE", "STATE", "DATA-DIRECTORY"} {
			t.column(h, nil)
		}
		for _, r := range ev.Replicas {
			set, ok := roles[r.EngineName]
			if !ok {
				set = "<no such engine>"
			}
			t.row([]string{r.Name, dash(r.NodeID), dash(r.EngineName), set, fmt.Sprint(r.Active), dash(r.State), dash(r.DataDirectory)},
				[]func(string) string{nil, nil, nil, rolePaint(p, set)})
		}
		indented(b, t)
	}

	if st.Version.HasVolumeAttachments() || len(ev.Tickets) > 0 {
		b.WriteString("Attachment tickets:\n")
		if len(ev.Tickets) == 0 {
			b.WriteString("  <none>\n")
		} else {
			t := &table{}
			for _, h := range []string{"ID", "TYPE", "NODE", "SATISFIED"} {
				t.column(h, nil)
			}
			for _, tk := range ev.Tickets {
				t.row([]string{tk.ID, dash(tk.Type), dash(tk.NodeID), fmt.Sprint(tk.Satisfied)}, nil)
			}
			indented(b, t)
		}
	}

	if w := ev.Workload; w != nil {
		describeWorkload(b, w, kv)
	}

	if f == nil {
		kv(0, "Finding", p.Green("none: one active engine, nothing to do"))
		kv(0, "Repair", "none needed")
		return
	}
	kv(0, "Finding", fmt.Sprintf("%s (%s)", f.Type, severityColor(p, f.Severity)(string(f.Severity))))
	if len(f.Preconditions) > 0 {
		b.WriteString("Preconditions:\n")
		t := &table{}
		t.column("", nil)
		t.column("", nil)
		for _, c := range f.Preconditions {
			mark, paint := "✓ ", p.Green
			switch {
			case !c.OK:
				mark, paint = "✗ ", p.Red
			case c.NotChecked:
				// passed only because its input was not read
				mark, paint = "? ", p.Yellow
			}
			t.row([]string{mark + c.Name, c.Detail}, []func(string) string{
				func(s string) string { return paint(mark) + strings.TrimPrefix(s, mark) }, p.Faint})
		}
		var tb bytes.Buffer
		_ = t.write(&tb, 0, false)
		lines := strings.Split(strings.TrimRight(tb.String(), "\n"), "\n")
		for i, l := range lines {
			b.WriteString("  " + l + "\n")
			if c := f.Preconditions[i]; !c.OK && c.Failure != "" {
				b.WriteString("      " + p.Red(c.Failure) + "\n")
			}
		}
	}
	kv(0, "Decision", decision(f, p))
	kv(0, "Why", wrap(f.Reason, keyWidth, width))
	kv(0, "Repair", repairCommand(st.Namespace, f))
	describeFamily(b, f, kv)
	if len(f.Steps) > 0 {
		b.WriteString("By hand (fix does not do it; read in Longhorn's source):\n")
		for i, s := range f.Steps {
			fmt.Fprintf(b, "  %d. %s\n", i+1, s)
		}
	}
	if l := f.Evidence.Logs; l != nil && l.Count > 0 {
		b.WriteString("Log evidence:\n")
		kv(2, "Lines", fmt.Sprint(l.Count))
		if !l.FirstSeen.IsZero() {
			kv(2, "First seen", l.FirstSeen.UTC().Format(time.RFC3339))
			kv(2, "Last seen", l.LastSeen.UTC().Format(time.RFC3339))
		}
		kv(2, "Message", l.Message)
		for i, file := range l.Files {
			key := ""
			if i == 0 {
				key = "Files"
			}
			if key == "" {
				fmt.Fprintf(b, "  %-22s%s\n", "", file)
			} else {
				kv(2, key, file)
			}
		}
	}
}

// Describe's layout: values start at keyWidth; Why wraps at the
// terminal's width, so a long reason reads as a paragraph.
const keyWidth = 32

// describeWorkload shows where the workload runs: the pods using the
// volume and Longhorn's CSI attachments of its PV, or why they were not
// checked.
func describeWorkload(b *bytes.Buffer, w *detect.WorkloadPlacement, kv func(int, string, string)) {
	b.WriteString("Workload:\n")
	workloadPart(kv, "Pods", w.PodsNotChecked, len(w.Pods), func() {
		b.WriteString("  Pods:\n")
		t := &table{}
		for _, h := range []string{"POD", "NODE", "PHASE", "VMI"} {
			t.column(h, nil)
		}
		for _, pd := range w.Pods {
			t.row([]string{pd.Namespace + "/" + pd.Name, dash(pd.Node), dash(pd.Phase), dash(pd.VMI)}, nil)
		}
		var tb bytes.Buffer
		_ = t.write(&tb, 0, true)
		for _, l := range strings.Split(strings.TrimRight(tb.String(), "\n"), "\n") {
			b.WriteString("    " + l + "\n")
		}
	})
	workloadPart(kv, "CSI attachments", w.CSIAttachmentsNotChecked, len(w.CSIAttachments), func() {
		var parts []string
		for _, a := range w.CSIAttachments {
			s := a.Name + " on " + dash(a.Node)
			if !a.Attached {
				s += " (not attached)"
			}
			parts = append(parts, s)
		}
		kv(2, "CSI attachments", strings.Join(parts, ", "))
	})
}

// workloadPart shows one part of the workload under key: why its objects
// were not checked, <none>, or the n objects (show).
func workloadPart(kv func(int, string, string), key, notChecked string, n int, show func()) {
	switch {
	case notChecked != "":
		kv(2, key, notChecked)
	case n == 0:
		kv(2, key, "<none>")
	default:
		show()
	}
}

// wrap breaks s into lines of at most width runes, the lines after the
// first indented by indent.
func wrap(s string, indent, width int) string {
	if width <= indent+20 {
		return strings.Join(strings.Fields(s), " ") // no terminal, or too narrow to help
	}
	words := strings.Fields(s)
	var b strings.Builder
	col := indent
	for i, w := range words {
		if i > 0 {
			if col+1+runes(w) > width {
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteByte(' ')
				col++
			}
		}
		b.WriteString(w)
		col += runes(w)
	}
	return b.String()
}

// engineRole is the engine's part in the finding (keep, stale, migration)
// or, without one, whether it is the engine on the current node.
func engineRole(ev *detect.Evidence, e detect.EngineEvidence) string {
	if e.Role != "" {
		return e.Role
	}
	if e.Active && e.NodeID != "" && e.NodeID == ev.CurrentNodeID {
		return "current"
	}
	return "-"
}

func rolePaint(p cmdutil.Painter, role string) func(string) string {
	switch role {
	case "keep", "current":
		return p.Green
	case "stale":
		return p.Red
	case "<no such engine>":
		return p.Yellow
	}
	return nil
}

// decision says what fix would do, and for a refused repair what stopped it.
func decision(f *detect.Finding, p cmdutil.Painter) string {
	switch {
	case f.Action == detect.ActionDeactivate:
		return p.Bold(fmt.Sprintf("deactivate %s (set spec.active=false), keep %s", strings.Join(f.Stale, ", "), f.Keep))
	case f.Action == detect.ActionDelete:
		return p.Bold(fmt.Sprintf("delete %s, keep %s", strings.Join(f.Stale, ", "), f.Keep))
	case f.Action == detect.ActionClearMigrationNode:
		return p.Bold(fmt.Sprintf("clear status.currentMigrationNodeID (%s) on the status subresource; no engine or replica is written", f.Evidence.CurrentMigrationNodeID))
	case f.Overdue():
		return p.Yellow(f.Decision())
	case f.Action == detect.ActionWait:
		return f.Decision()
	}
	if c := f.FirstFailed(); c != nil {
		return p.Red("no repair: " + c.Failure)
	}
	if f.Severity.NeedsAttention() {
		return "no automatic repair (see Why)"
	}
	return "nothing to do"
}

// repairCommand is the exact command line that would repair the volume.
func repairCommand(ns string, f *detect.Finding) string {
	switch f.Action {
	case detect.ActionDeactivate, detect.ActionDelete, detect.ActionClearMigrationNode:
		cmd := "kubectl longhorn-engines fix " + f.Volume
		if ns != "" {
			cmd += " -n " + ns
		}
		return cmd + "   (add --dry-run=client to see the plan first)"
	case detect.ActionWait:
		return "none: wait and describe it again"
	}
	if f.Family != nil {
		return "none automatic: the maintainers' repair below"
	}
	if f.Type == detect.TypeInvertedReplicaFlags {
		return "none automatic: recover the replica flags by hand (" + docs.Troubleshooting + ")"
	}
	if f.Severity.NeedsAttention() {
		return "none automatic (" + docs.Troubleshooting + ")"
	}
	return "none needed"
}

// indented writes a sub-table two spaces in.
func indented(b *bytes.Buffer, t *table) {
	var tb bytes.Buffer
	_ = t.write(&tb, 0, true)
	for _, l := range strings.SplitAfter(tb.String(), "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
}

// age is kubectl's AGE of t at now ("<unknown>" without a time).
func age(now, t time.Time) string {
	if t.IsZero() || now.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return []string{"-"}
	}
	return out
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func orUnknown(s string) string { return orText(s, "unknown") }
