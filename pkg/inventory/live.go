package inventory

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// LoadOptions select what to read.
type LoadOptions struct {
	Namespace string
	// Volumes restricts the state to these volumes (all when empty).
	Volumes []string
	// Selector is a label selector on volumes.
	Selector string
	// PageSize is the LIST limit.
	PageSize int
	// Warnf reports things that did not stop the read (may be nil).
	Warnf func(format string, args ...any)
}

// NotFoundError is an unknown volume name.
type NotFoundError struct {
	Names     []string
	Namespace string
}

func (e *NotFoundError) Error() string {
	if len(e.Names) == 1 {
		return fmt.Sprintf("volume %q not found in namespace %q", e.Names[0], e.Namespace)
	}
	return fmt.Sprintf("volumes %q not found in namespace %q", e.Names, e.Namespace)
}

// Load reads the Longhorn objects of one namespace with one paginated LIST per
// resource (never one request per volume) and keeps only the selected volumes
// and what belongs to them.
func Load(ctx context.Context, c *Client, o LoadOptions) (*longhorn.State, error) {
	warnf := o.Warnf
	if warnf == nil {
		warnf = func(string, ...any) {}
	}
	ns := o.Namespace
	st := &longhorn.State{Namespace: ns, Now: time.Now()}

	vols, err := ListAll[longhorn.Volume](ctx, c, longhorn.Volumes, ns, o.Selector, o.PageSize)
	if err != nil {
		return nil, err
	}
	ver, src, err := ReadVersion(ctx, c, ns)
	if err != nil {
		return nil, err
	}
	st.Version, st.VersionSource = ver, src
	if !ver.Known() {
		if len(vols) == 0 {
			return nil, fmt.Errorf("no Longhorn found in namespace %q (no volumes and no %s setting): is the namespace right? Use -n", ns, longhorn.VersionSetting)
		}
		warnf("Longhorn version unknown (%s): findings are reported, no repair is proposed", src)
	}

	want, err := selectVolumes(vols, o)
	if err != nil {
		return nil, err
	}
	if want != nil {
		kept := vols[:0]
		for _, v := range vols {
			if want[v.Name] {
				kept = append(kept, v)
			}
		}
		vols = kept
	}
	st.Volumes = vols

	if st.Engines, err = ListAll[longhorn.Engine](ctx, c, longhorn.Engines, ns, "", o.PageSize); err != nil {
		return nil, err
	}
	if st.Replicas, err = ListAll[longhorn.Replica](ctx, c, longhorn.Replicas, ns, "", o.PageSize); err != nil {
		return nil, err
	}
	if !ver.Known() || ver.HasVolumeAttachments() {
		st.VolumeAttachments, err = ListAll[longhorn.VolumeAttachment](ctx, c, longhorn.VolumeAttachments, ns, "", o.PageSize)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	ims, err := ListAll[longhorn.InstanceManager](ctx, c, longhorn.InstanceManagers, ns, "", o.PageSize)
	switch {
	case err == nil:
		st.InstanceManagers, st.InstanceManagersRead = ims, true
	default:
		warnf("instance managers not read, orphan engine processes not checked: %v", err)
	}
	if want != nil {
		st.Engines = filterByVolume(st.Engines, want, func(e *longhorn.Engine) string { return volumeOf(e.Spec.VolumeName, e.Labels) })
		st.Replicas = filterByVolume(st.Replicas, want, func(r *longhorn.Replica) string { return volumeOf(r.Spec.VolumeName, r.Labels) })
		st.VolumeAttachments = filterByVolume(st.VolumeAttachments, want, func(va *longhorn.VolumeAttachment) string { return volumeOf(va.Spec.Volume, nil, va.Name) })
	}
	return st, nil
}

// Partial reports whether the state covers only some volumes, in which case
// orphan checks (which need every volume) must be skipped.
func (o LoadOptions) Partial() bool { return len(o.Volumes) > 0 || o.Selector != "" }

// ReadVersion reads the current-longhorn-version setting. A missing setting
// is not an error (the version is then unknown and no repair is proposed).
func ReadVersion(ctx context.Context, c *Client, ns string) (longhorn.Version, string, error) {
	s, err := Get[longhorn.Setting](ctx, c, longhorn.Settings, ns, longhorn.VersionSetting)
	switch {
	case apierrors.IsNotFound(err):
		return longhorn.Version{}, "setting " + longhorn.VersionSetting + " not found", nil
	case err != nil:
		return longhorn.Version{}, "", cmdutil.Explain(err, "get", longhorn.Settings.GroupResource(), ns)
	}
	v, perr := longhorn.ParseVersion(s.Value)
	if perr != nil {
		return longhorn.Version{}, fmt.Sprintf("setting %s has value %q", longhorn.VersionSetting, s.Value), nil
	}
	return v, "setting " + longhorn.VersionSetting, nil
}

func selectVolumes(vols []longhorn.Volume, o LoadOptions) (map[string]bool, error) {
	if len(o.Volumes) == 0 {
		if o.Selector == "" {
			return nil, nil
		}
		if _, err := labels.Parse(o.Selector); err != nil {
			return nil, fmt.Errorf("invalid selector %q: %w", o.Selector, err)
		}
		want := make(map[string]bool, len(vols))
		for _, v := range vols {
			want[v.Name] = true
		}
		return want, nil
	}
	have := make(map[string]bool, len(vols))
	for _, v := range vols {
		have[v.Name] = true
	}
	want := make(map[string]bool, len(o.Volumes))
	var missing []string
	for _, n := range o.Volumes {
		if !have[n] {
			missing = append(missing, n)
		}
		want[n] = true
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, &NotFoundError{Names: missing, Namespace: o.Namespace}
	}
	return want, nil
}

func filterByVolume[T any](items []T, want map[string]bool, vol func(*T) string) []T {
	kept := items[:0]
	for i := range items {
		if want[vol(&items[i])] {
			kept = append(kept, items[i])
		}
	}
	return kept
}

func volumeOf(specName string, lbls map[string]string, fallback ...string) string {
	if specName != "" {
		return specName
	}
	if v := lbls[longhorn.VolumeLabel]; v != "" {
		return v
	}
	if len(fallback) > 0 {
		return fallback[0]
	}
	return ""
}
