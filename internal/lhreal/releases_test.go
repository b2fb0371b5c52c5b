package lhreal

import (
	"slices"
	"testing"
)

func TestModulesSorted(t *testing.T) {
	got := Modules()
	for _, want := range append([]string{"v1.4.3", "v1.10.0"}, Sample...) {
		if !slices.Contains(got, want) {
			t.Errorf("Modules() = %v, missing %s", got, want)
		}
	}
	if !slices.IsSortedFunc(got, compareReleases) || (len(got) > 0 && got[0] != "v1.4.3") {
		t.Errorf("Modules() = %v, want oldest first", got)
	}
}

func TestReleasesFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want []string
	}{
		{"", Sample},
		{"all", Modules()},
		{"v1.12.0, v1.4.3,v1.12.0", []string{"v1.4.3", "v1.12.0"}},
		{"v9.9.9", []string{"v9.9.9"}}, // kept: Binary then fails on it
	} {
		t.Setenv(ReleasesEnv, tc.env)
		if got := Releases(); !slices.Equal(got, tc.want) {
			t.Errorf("%s=%q: Releases() = %v, want %v", ReleasesEnv, tc.env, got, tc.want)
		}
	}
	t.Setenv(ReleasesEnv, "v9.9.9")
	if _, err := Binary("v9.9.9"); err == nil {
		t.Error("Binary of a release without a module: no error")
	}
}

func compareReleases(a, b string) int {
	if versionLess(a, b) {
		return -1
	}
	if versionLess(b, a) {
		return 1
	}
	return 0
}
