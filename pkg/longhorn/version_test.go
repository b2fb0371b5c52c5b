package longhorn

import "testing"

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in                  string
		major, minor, patch int
		raw                 string
		wantErr             bool
	}{
		{in: "v1.4.3", major: 1, minor: 4, patch: 3, raw: "v1.4.3"},
		{in: "1.6.0", major: 1, minor: 6, patch: 0, raw: "1.6.0"},
		{in: "  v1.5.2\n", major: 1, minor: 5, patch: 2, raw: "v1.5.2"},
		{in: "v1.5.1-rc1", major: 1, minor: 5, patch: 1, raw: "v1.5.1-rc1"},
		{in: "v1.4.4-dev-20230915", major: 1, minor: 4, patch: 4, raw: "v1.4.4-dev-20230915"},
		{in: "v1.12.1+build.7", major: 1, minor: 12, patch: 1, raw: "v1.12.1+build.7"},
		{in: "v1.7", major: 1, minor: 7, patch: 0, raw: "v1.7"},
		{in: "v10.20.30", major: 10, minor: 20, patch: 30, raw: "v10.20.30"},

		{in: "", wantErr: true},
		{in: "v", wantErr: true},
		{in: "master", wantErr: true},
		{in: "master-head", wantErr: true},
		{in: "latest", wantErr: true},
		{in: "1", wantErr: true},
		{in: "v1", wantErr: true},
		{in: "v1.4.3.1", wantErr: true},
		{in: "v1.x.3", wantErr: true},
		{in: "v1..3", wantErr: true},
		{in: "v1.4.", wantErr: true},
		{in: "-1.4.3", wantErr: true},
		{in: "v-1.4.3", wantErr: true},
		{in: "1.-4.3", wantErr: true},
		{in: "vv1.4.3", wantErr: true},
		{in: "longhornio/longhorn-manager:v1.4.3", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := ParseVersion(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseVersion(%q) = %+v, want an error", tt.in, v)
				}
				if v != (Version{}) {
					t.Errorf("ParseVersion(%q) returned %+v with its error, want the zero Version", tt.in, v)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseVersion(%q): %v", tt.in, err)
			}
			if v.Major != tt.major || v.Minor != tt.minor || v.Patch != tt.patch || v.Raw != tt.raw {
				t.Errorf("ParseVersion(%q) = %+v, want %d.%d.%d raw %q", tt.in, v, tt.major, tt.minor, tt.patch, tt.raw)
			}
			if !v.Known() {
				t.Errorf("ParseVersion(%q).Known() = false", tt.in)
			}
			if v.String() != tt.raw {
				t.Errorf("String() = %q, want %q", v.String(), tt.raw)
			}
		})
	}
}

func TestMustParseVersionPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParseVersion(garbage) did not panic")
		}
	}()
	MustParseVersion("garbage")
}

func TestVersionStringAndKnown(t *testing.T) {
	if (Version{}).Known() {
		t.Error("zero Version is Known")
	}
	if got := (Version{}).String(); got != "unknown" {
		t.Errorf("zero Version String() = %q, want unknown", got)
	}
	if got := (Version{Major: 1, Minor: 4, Patch: 3}).String(); got != "v1.4.3" {
		t.Errorf("String() without Raw = %q, want v1.4.3", got)
	}
	if !(Version{Patch: 1}).Known() {
		t.Error("0.0.1 is not Known")
	}
}

func TestAtLeast(t *testing.T) {
	tests := []struct {
		v                   string
		major, minor, patch int
		want                bool
	}{
		{"v1.5.0", 1, 5, 0, true},
		{"v1.4.9", 1, 5, 0, false},
		{"v1.10.0", 1, 9, 5, true},
		{"v1.9.5", 1, 10, 0, false},
		{"v2.0.0", 1, 99, 99, true},
		{"v0.99.99", 1, 0, 0, false},
		{"v1.5.1", 1, 5, 2, false},
		{"v1.5.2", 1, 5, 2, true},
	}
	for _, tt := range tests {
		if got := MustParseVersion(tt.v).AtLeast(tt.major, tt.minor, tt.patch); got != tt.want {
			t.Errorf("%s.AtLeast(%d,%d,%d) = %t, want %t", tt.v, tt.major, tt.minor, tt.patch, got, tt.want)
		}
	}
}

func TestAfterLine(t *testing.T) {
	line := Version{Major: 1, Minor: 12}
	for v, want := range map[string]bool{"v1.12.0": false, "v1.12.9": false, "v1.11.1": false, "v1.13.0": true, "v2.0.0": true} {
		if got := MustParseVersion(v).AfterLine(line); got != want {
			t.Errorf("%s.AfterLine(1.12) = %t, want %t", v, got, want)
		}
	}
}

// TestVersionClass pins the version classes and every predicate derived
// from them, release by release.
func TestVersionClass(t *testing.T) {
	tests := []struct {
		v             string // "" = unknown (setting missing)
		class         Class
		affected      bool
		deterministic bool
		vas           bool // VolumeAttachment CRs and status.currentMigrationNodeID
		ticketLimits  bool
		readyTarget   bool
		v2Switchover  bool
	}{
		{"", ClassUnknown, false, false, false, false, false, false},
		{"v0.8.1", ClassUnsupported, false, false, false, false, false, false},
		{"v1.1.3", ClassUnsupported, false, false, false, false, false, false},
		{"v1.2.6", ClassUnsupported, false, false, false, false, false, false},
		{"v1.3.0", ClassL13, true, false, false, false, false, false},
		{"v1.3.2", ClassL13, true, false, false, false, false, false},
		{"v1.3.3", ClassL13, true, false, false, false, false, false},
		{"v1.3.9", ClassL13, true, false, false, false, false, false}, // no fix on the 1.3.x branch
		{"v1.4.0", ClassL14a, true, false, false, false, false, false},
		{"v1.4.3", ClassL14a, true, false, false, false, false, false},
		{"v1.4.3-hotfix-1", ClassL14a, true, false, false, false, false, false},
		{"v1.4.4", ClassL14f, false, true, false, false, false, false},
		{"v1.4.7", ClassL14f, false, true, false, false, false, false},
		{"v1.5.0", ClassL15a, true, false, true, false, false, false},
		{"v1.5.1", ClassL15a, true, false, true, false, false, false},
		{"v1.5.1-rc2", ClassL15a, true, false, true, false, false, false},
		{"v1.5.2", ClassL15f, false, true, true, false, false, false},
		{"v1.5.5", ClassL15f, false, true, true, false, false, false},
		{"v1.6.0", ClassL15f, false, true, true, false, false, false},
		{"v1.7.0", ClassL15f, false, true, true, true, false, false},
		{"v1.9.2", ClassL15f, false, true, true, true, false, false},
		{"v1.11.2", ClassL15f, false, true, true, true, false, false},
		{"v1.11.3", ClassL15f, false, true, true, true, true, false},
		{"v1.12.0", ClassL15f, false, true, true, true, false, true},
		{"v1.12.1", ClassL15f, false, true, true, true, true, true},
		{"v2.0.0", ClassL15f, false, true, true, true, true, true},
	}
	for _, tt := range tests {
		name := tt.v
		if name == "" {
			name = "unknown"
		}
		t.Run(name, func(t *testing.T) {
			var v Version
			if tt.v != "" {
				v = MustParseVersion(tt.v)
			}
			expect(t, "Class()", v.Class(), tt.class)
			expect(t, "Affected()", v.Affected(), tt.affected)
			expect(t, "DeterministicEngineNames()", v.DeterministicEngineNames(), tt.deterministic)
			expect(t, "HasVolumeAttachments()", v.HasVolumeAttachments(), tt.vas)
			expect(t, "HasCurrentMigrationNodeID()", v.HasCurrentMigrationNodeID(), tt.vas)
			expect(t, "TicketLimits()", v.TicketLimits(), tt.ticketLimits)
			// one change set of 1.7.0
			expect(t, "FinishesMigrationWhenDetached()", v.FinishesMigrationWhenDetached(), tt.ticketLimits)
			expect(t, "MigrationNeedsReadyTarget()", v.MigrationNeedsReadyTarget(), tt.readyTarget)
			expect(t, "V2Switchover()", v.V2Switchover(), tt.v2Switchover)
		})
	}
}

// TestAffectedMatchesClass: exactly the classes that were
// never fixed are affected; a fixed class is never deterministic-less.
func TestAffectedMatchesClass(t *testing.T) {
	for minor := 0; minor <= 14; minor++ {
		for patch := 0; patch <= 12; patch++ {
			v := Version{Major: 1, Minor: minor, Patch: patch}
			c := v.Class()
			wantAffected := c == ClassL13 || c == ClassL14a || c == ClassL15a
			if v.Affected() != wantAffected {
				t.Errorf("%s: Affected()=%t with class %s", v, v.Affected(), c)
			}
			if v.Affected() && v.DeterministicEngineNames() {
				t.Errorf("%s: affected and deterministic names at once", v)
			}
			if (c == ClassL14f || c == ClassL15f) != v.DeterministicEngineNames() {
				t.Errorf("%s: class %s but DeterministicEngineNames()=%t", v, c, v.DeterministicEngineNames())
			}
		}
	}
}
