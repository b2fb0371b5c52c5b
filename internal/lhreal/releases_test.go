package lhreal

import (
	"slices"
	"testing"
)

func TestReleasesSorted(t *testing.T) {
	got := Releases()
	for _, want := range []string{"v1.4.3", "v1.5.3", "v1.10.0"} {
		if !slices.Contains(got, want) {
			t.Errorf("Releases() = %v, missing %s", got, want)
		}
	}
	if !slices.IsSortedFunc(got, func(a, b string) int {
		if versionLess(a, b) {
			return -1
		}
		if versionLess(b, a) {
			return 1
		}
		return 0
	}) || (len(got) > 0 && got[0] != "v1.4.3") {
		t.Errorf("Releases() = %v, want oldest first", got)
	}
}
