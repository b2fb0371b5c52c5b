package testenv

import "testing"

// One Longhorn release of each class of docs/support-matrix.md, for tests
// that need "a release of class X" (L16 is the first release after the
// 1.5 line, fixed like L15f).
const (
	L13  = "v1.3.2"
	L14a = "v1.4.3"
	L14f = "v1.4.4"
	L15a = "v1.5.1"
	L15f = "v1.5.2"
	L16  = "v1.6.0"
)

// PerRelease runs body once per release, each as a parallel subtest named
// after its release.
func PerRelease(t *testing.T, releases []string, body func(t *testing.T, release string)) {
	t.Helper()
	for _, rel := range releases {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			body(t, rel)
		})
	}
}
