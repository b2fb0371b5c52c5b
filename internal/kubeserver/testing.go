package kubeserver

import (
	"context"
	"testing"
)

// ForTest starts a server for one test, stopped when the test ends, or
// fails the test.
func ForTest(ctx context.Context, t testing.TB) *Server {
	t.Helper()
	s, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}
