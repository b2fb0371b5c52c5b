package longhorn

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Longhorn release as written in the current-longhorn-version
// setting ("v1.4.3", "v1.5.1-rc1", "1.6.0").
type Version struct {
	Major, Minor, Patch int
	Raw                 string
}

// ParseVersion reads "v1.4.3" and similar; a pre-release or build suffix is
// kept in Raw but does not change the comparison.
func ParseVersion(s string) (Version, error) {
	raw := strings.TrimSpace(s)
	t := strings.TrimPrefix(raw, "v")
	if i := strings.IndexAny(t, "-+"); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("not a Longhorn version: %q", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Version{}, fmt.Errorf("not a Longhorn version: %q", s)
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2], Raw: raw}, nil
}

// MustParseVersion is for tests and constants.
func MustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Known is false for the zero Version (the setting was missing or unreadable).
func (v Version) Known() bool { return v.Major > 0 || v.Minor > 0 || v.Patch > 0 }

func (v Version) String() string {
	if !v.Known() {
		return "unknown"
	}
	if v.Raw != "" {
		return v.Raw
	}
	return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// AfterLine reports whether v belongs to a minor line after line's (1.13.0
// is after the 1.12 line; 1.12.9 is not): where a release table stops.
func (v Version) AfterLine(line Version) bool {
	return v.AtLeast(line.Major, line.Minor+1, 0)
}

// AtLeast compares major.minor.patch.
func (v Version) AtLeast(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

// Class groups releases that behave alike for #6642 (docs/scan-report.md,
// "Version classes").
type Class string

const (
	ClassUnknown     Class = "unknown"     // version not known: never act
	ClassUnsupported Class = "unsupported" // before 1.3: v1beta2 not served
	ClassL13         Class = "L13"         // 1.3.0–1.3.3: affected, never fixed
	ClassL14a        Class = "L14a"        // 1.4.0–1.4.3: affected
	ClassL14f        Class = "L14f"        // 1.4.4+: fixed
	ClassL15a        Class = "L15a"        // 1.5.0–1.5.1: affected, VolumeAttachment CRs
	ClassL15f        Class = "L15f"        // 1.5.2+ and 1.6+: fixed
)

// Class returns the behaviour class of the release.
func (v Version) Class() Class {
	switch {
	case !v.Known():
		return ClassUnknown
	case v.Major < 1:
		return ClassUnsupported
	case v.Major > 1:
		return ClassL15f
	case v.Minor < 3:
		return ClassUnsupported
	case v.Minor == 3:
		return ClassL13
	case v.Minor == 4 && v.Patch <= 3:
		return ClassL14a
	case v.Minor == 4:
		return ClassL14f
	case v.Minor == 5 && v.Patch <= 1:
		return ClassL15a
	default:
		return ClassL15f
	}
}

// Fixed reports a release with the #6642 fix (1.4.4+, 1.5.2+).
func (c Class) Fixed() bool { return c == ClassL14f || c == ClassL15f }

// Affected reports a release with the two-active-engines bug (#6642).
func (v Version) Affected() bool {
	switch v.Class() {
	case ClassL13, ClassL14a, ClassL15a:
		return true
	}
	return false
}

// HasVolumeAttachments: migration is driven by longhorn.io VolumeAttachment
// tickets from 1.5.0; before, by spec.migrationNodeID.
func (v Version) HasVolumeAttachments() bool { return v.AtLeast(1, 5, 0) }

// HasCurrentMigrationNodeID: status.currentMigrationNodeID exists from 1.5.0.
func (v Version) HasCurrentMigrationNodeID() bool { return v.AtLeast(1, 5, 0) }

// DeterministicEngineNames: "<vol>-e-N" names from 1.4.4 and 1.5.2.
func (v Version) DeterministicEngineNames() bool {
	c := v.Class()
	return c == ClassL14f || c == ClassL15f
}

// TicketLimits: the webhook enforces csi ticket counts from 1.7.0.
func (v Version) TicketLimits() bool { return v.AtLeast(1, 7, 0) }

// TicketLimitCountsCSIOnly: from 1.11.0 the webhook's two-node limit of a
// migratable volume counts csi-attacher tickets only; 1.7–1.10 count every
// ticket, a backup's or snapshot's too (longhorn#11555).
func (v Version) TicketLimitCountsCSIOnly() bool { return v.AtLeast(1, 11, 0) }

// FinishesMigrationWhenDetached: the volume controller finishes a confirm
// or rollback (spec.migrationNodeID cleared) also while status.currentNodeID
// is empty, from 1.7.0 (longhorn-manager c9eef3b, "Cancel migration when
// volume detaches", with the ticket limits); before, processMigration waits
// until the volume is attached again, with its active engine on spec.nodeID.
func (v Version) FinishesMigrationWhenDetached() bool { return v.AtLeast(1, 7, 0) }

// MigrationNeedsReadyTarget: the VolumeAttachment controller waits for the
// target node to be Ready from 1.11.3 and 1.12.1 (#13109).
func (v Version) MigrationNeedsReadyTarget() bool {
	if v.Major == 1 && v.Minor == 11 {
		return v.Patch >= 3
	}
	return v.AtLeast(1, 12, 1)
}

// ReplicaDeleteIgnoresConflict: from 1.12.0 the volume controller deletes a
// replica even when the write that should store its last spec (active=false
// after a confirm's or rollback's switch) is answered 409 Conflict, so the
// replica can be deleted while stored active, and deleting an active replica
// removes its data directory, which a migration's clone shares
// (longhorn-manager deleteReplica; 1.4–1.11 stop the sync instead; the v1
// behaviour was restored upstream in longhorn-manager 85aae779, which no
// tag served here contains).
func (v Version) ReplicaDeleteIgnoresConflict() bool { return v.AtLeast(1, 12, 0) }

// HasEngineFrontends: enginefrontends.longhorn.io exists from 1.12.0 (v2
// volumes only).
func (v Version) HasEngineFrontends() bool { return v.AtLeast(1, 12, 0) }

// V2Switchover: v2 volumes can move their engine (target) live from 1.12.
func (v Version) V2Switchover() bool { return v.AtLeast(1, 12, 0) }

// DeletesExtraMigrationClones: the volume controller deletes a second clone
// of a data directory made for a migration engine (longhorn#11397,
// deleteExtraInvalidMigrationReplicas) from 1.10.2 and 1.11.0.
func (v Version) DeletesExtraMigrationClones() bool {
	if v.Major == 1 && v.Minor == 10 {
		return v.Patch >= 2
	}
	return v.AtLeast(1, 11, 0)
}
