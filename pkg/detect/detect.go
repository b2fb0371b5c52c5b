// Package detect classifies Longhorn volumes from a snapshot of their custom
// resources (longhorn.State): the finding types and preconditions of
// docs/scan-report.md, and what fix does about each on each release
// (docs/troubleshooting-two-active-engines.md). It is pure: no client, no clock, no I/O, so the same code
// judges a live cluster, a support bundle and YAML files.
package detect

import (
	"sort"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// DefaultPendingThreshold is how long an active engine may wait for its
// finalizer before it is worth a person's attention.
const DefaultPendingThreshold = 10 * time.Minute

// Options tune the classification.
type Options struct {
	// PendingThreshold: a pending cleanup older than this is a warning.
	PendingThreshold time.Duration
	// SkipOrphans leaves out orphan checks, which need every volume (set when
	// only some volumes were read).
	SkipOrphans bool
}

// Result is the classification of one State.
type Result struct {
	// Volumes is the number of volumes examined.
	Volumes int
	// Healthy is the number of volumes with no finding.
	Healthy int
	// Findings in volume-name order.
	Findings []Finding
}

// NeedsAttention reports whether any finding is a warning or worse.
func (r *Result) NeedsAttention() bool {
	for i := range r.Findings {
		if r.Findings[i].Severity.NeedsAttention() {
			return true
		}
	}
	return false
}

// Classify examines every volume of the state.
func Classify(st *longhorn.State, opts Options) Result {
	if opts.PendingThreshold <= 0 {
		opts.PendingThreshold = DefaultPendingThreshold
	}
	idx := newIndex(st)
	res := Result{Volumes: len(st.Volumes)}
	for i := range st.Volumes {
		v := &st.Volumes[i]
		f, ok := classifyVolume(st, idx, v, opts)
		if !ok {
			res.Healthy++
			continue
		}
		res.Findings = append(res.Findings, f)
	}
	if !opts.SkipOrphans {
		res.Findings = append(res.Findings, orphans(st, idx)...)
	}
	sort.SliceStable(res.Findings, func(i, j int) bool {
		return res.Findings[i].Volume < res.Findings[j].Volume
	})
	return res
}

// ClassifyVolume examines one volume; ok is false when it is healthy. The fix
// command calls it on a fresh re-read right before acting.
func ClassifyVolume(st *longhorn.State, name string, opts Options) (Finding, bool) {
	if opts.PendingThreshold <= 0 {
		opts.PendingThreshold = DefaultPendingThreshold
	}
	if v := st.Volume(name); v != nil {
		return classifyVolume(st, newIndex(st), v, opts)
	}
	return Finding{}, false
}

// Describe is what `describe` shows of one volume: its evidence, and the
// finding when it has one. ok is false when the volume is not in st.
func Describe(st *longhorn.State, name string, opts Options) (ev Evidence, f Finding, hasFinding, ok bool) {
	if opts.PendingThreshold <= 0 {
		opts.PendingThreshold = DefaultPendingThreshold
	}
	v := st.Volume(name)
	if v == nil {
		return Evidence{}, Finding{}, false, false
	}
	idx := newIndex(st)
	if f, found := classifyVolume(st, idx, v, opts); found {
		return f.Evidence, f, true, true
	}
	return evidence(st, v, idx.engines[name], idx.replicas[name], idx.vas[name]), Finding{}, false, true
}

// index groups engines, replicas and attachments by volume name once, so a
// scan of 10,000 volumes stays linear.
type index struct {
	engines  map[string][]*longhorn.Engine
	replicas map[string][]*longhorn.Replica
	vas      map[string]*longhorn.VolumeAttachment
	efs      map[string][]*longhorn.EngineFrontend
	volumes  map[string]bool
}

func newIndex(st *longhorn.State) *index {
	idx := &index{
		engines:  make(map[string][]*longhorn.Engine, len(st.Volumes)),
		replicas: make(map[string][]*longhorn.Replica, len(st.Volumes)),
		vas:      make(map[string]*longhorn.VolumeAttachment, len(st.VolumeAttachments)),
		efs:      make(map[string][]*longhorn.EngineFrontend),
		volumes:  make(map[string]bool, len(st.Volumes)),
	}
	for i := range st.EngineFrontends {
		ef := &st.EngineFrontends[i]
		vol := longhorn.VolumeOf(ef)
		idx.efs[vol] = append(idx.efs[vol], ef)
	}
	for _, efs := range idx.efs {
		sort.Slice(efs, func(i, j int) bool { return efs[i].Name < efs[j].Name })
	}
	for i := range st.Volumes {
		idx.volumes[st.Volumes[i].Name] = true
	}
	for i := range st.Engines {
		e := &st.Engines[i]
		vol := longhorn.VolumeOf(e)
		idx.engines[vol] = append(idx.engines[vol], e)
	}
	for i := range st.Replicas {
		r := &st.Replicas[i]
		vol := longhorn.VolumeOf(r)
		idx.replicas[vol] = append(idx.replicas[vol], r)
	}
	for i := range st.VolumeAttachments {
		va := &st.VolumeAttachments[i]
		idx.vas[longhorn.VolumeOf(va)] = va
	}
	for _, es := range idx.engines {
		sort.Slice(es, func(i, j int) bool { return longhorn.OlderEngine(es[i], es[j]) })
	}
	for _, rs := range idx.replicas {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
	}
	return idx
}

// strictlyNewer reports a known to be created after b: by deterministic
// suffix, else by creation time. Equal times (same second) say nothing.
func strictlyNewer(a, b *longhorn.Engine) bool {
	na, oka := a.EngineSuffix()
	nb, okb := b.EngineSuffix()
	if oka && okb {
		return na > nb
	}
	return a.CreationTimestamp.Time.After(b.CreationTimestamp.Time)
}
