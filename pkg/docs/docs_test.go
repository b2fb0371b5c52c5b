package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The links messages print lead to the project's repository as krew
// publishes it, and to files that exist there.
func TestLinksPointAtTheRepository(t *testing.T) {
	krew, err := os.ReadFile("../../.krew.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*homepage:\s*(\S+)`).FindSubmatch(krew)
	if m == nil {
		t.Fatal(".krew.yaml has no homepage")
	}
	if want := strings.TrimSuffix(string(m[1]), "/") + "/blob/main/"; Base != want {
		t.Errorf("Base = %q; .krew.yaml's homepage gives %q", Base, want)
	}
	for _, u := range []string{RBAC, Troubleshooting, SupportMatrix, ExitCodes, Deploy, GuardJob, GuardRBAC} {
		path := strings.TrimPrefix(u, Base)
		if _, err := os.Stat(filepath.Join("../..", path)); err != nil {
			t.Errorf("%s links a file the repository does not have: %v", u, err)
		}
	}
}
