package preflight

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/detect"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/docs"
	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

func TestUpgradePath(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     []string
	}{
		{"v1.4.3", "v1.5.5", nil},
		{"v1.4.3", "v1.4.4", nil},
		{"v1.3.2", "v1.6.0", []string{
			"v1.4.x: use v1.4.4 or later (earlier 1.4 releases are affected)",
			"v1.5.x: use v1.5.2 or later (earlier 1.5 releases are affected)",
			"v1.6.0"}},
		{"v1.5.1", "v1.7.2", []string{"v1.6.x", "v1.7.2"}},
		{"v1.9.0", "v2.0.0", nil},
	} {
		got := upgradePath(longhorn.MustParseVersion(tc.from), longhorn.MustParseVersion(tc.to))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s -> %s: got %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		from, to      string
		fixes, affect bool
		repair        detect.Action
	}{
		// a volume stuck before the upgrade is repaired on fixed releases too
		{"v1.4.3", "v1.6.2", true, false, detect.ActionDeactivate},
		{"v1.4.3", "v1.5.1", false, true, detect.ActionDelete},
		{"v1.3.3", "v1.4.2", false, true, detect.ActionDeactivate},
		{"v1.5.2", "v1.6.0", false, false, detect.ActionDeactivate},
		{"v1.5.2", "v1.12.0", false, false, detect.ActionDeactivate},
		{"v1.5.2", "v1.13.0", false, false, detect.ActionNone},
	} {
		g := assessTarget(longhorn.MustParseVersion(tc.from), longhorn.MustParseVersion(tc.to))
		if g.Fixes != tc.fixes || g.Affected != tc.affect || g.Repair != tc.repair || !g.StuckStayStuck {
			t.Errorf("%s -> %s: %+v", tc.from, tc.to, g)
		}
	}
	if err := checkTarget(longhorn.MustParseVersion("v1.5.1"), longhorn.MustParseVersion("v1.5.0")); err == nil {
		t.Error("a downgrade must be refused")
	}
	if err := checkTarget(longhorn.Version{}, longhorn.MustParseVersion("v1.5.0")); err != nil {
		t.Errorf("unknown running release: %v", err)
	}
}

func TestFormatWindow(t *testing.T) {
	for d, want := range map[time.Duration]string{6 * time.Hour: "6h", 90 * time.Minute: "1h30m", 30 * time.Second: "30s", 45 * time.Minute: "45m"} {
		if got := formatWindow(d); got != want {
			t.Errorf("%v: got %q, want %q", d, got, want)
		}
	}
}

// TestConfirmCleanupNote: preflight warns on 1.12, running or targeted,
// that each live migration's confirm can wipe data under a conflict, and
// nowhere else.
func TestConfirmCleanupNote(t *testing.T) {
	for ver, want := range map[string]bool{"v1.4.3": false, "v1.11.1": false, "v1.12.0": true, "v1.12.1": true} {
		v := longhorn.MustParseVersion(ver)
		if got := strings.Contains(assessRelease(v).Note, docs.ConfirmCleanup); got != want {
			t.Errorf("running %s: note names the confirm clean-up: %t, want %t", ver, got, want)
		}
		if got := strings.Contains(assessTarget(longhorn.MustParseVersion("v1.11.1"), v).Note, docs.ConfirmCleanup); got != want && ver != "v1.4.3" {
			t.Errorf("--to %s: note names the confirm clean-up: %t, want %t", ver, got, want)
		}
	}
}

// TestRecommendOn112: with volumes that live-migrate, a 1.12 running or
// targeted adds the step that says to stop them before draining; none
// migrate, or no 1.12 on the way, no such step.
func TestRecommendOn112(t *testing.T) {
	v111, v112 := longhorn.MustParseVersion("v1.11.1"), longhorn.MustParseVersion("v1.12.0")
	for _, tc := range []struct {
		running   longhorn.Version
		target    *longhorn.Version
		migrating int
		want      bool
	}{
		{v112, nil, 2, true},
		{v111, &v112, 2, true},
		{v112, nil, 0, false},
		{v111, nil, 2, false},
	} {
		st := &longhorn.State{Namespace: longhorn.DefaultNamespace, Version: tc.running}
		r := &Report{}
		r.Summary.Migrating = tc.migrating
		rec := recommend(st, r, tc.target, time.Hour)
		got := slices.ContainsFunc(rec.Steps, func(s string) bool { return strings.Contains(s, docs.ConfirmCleanup) })
		if got != tc.want {
			t.Errorf("running %s, target %v, %d migrating: step named %t, want %t: %q", tc.running, tc.target, tc.migrating, got, tc.want, rec.Steps)
		}
	}
}
