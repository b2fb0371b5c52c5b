package lhreal

import (
	"context"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
)

// Servers are one test API server per release, each serving that release's
// own CRDs, for a test package's TestMain (internal/realtest and
// internal/explore).
type Servers struct {
	// Clusters holds the servers that started, by release.
	Clusters map[string]*testcluster.Cluster
	// Errs holds why a release has no server (its controllers did not
	// build, or its server did not start).
	Errs map[string]error
}

// StartServers builds each release's controllers first, outside the
// start-up deadline (a cold build on a loaded 2-core machine has taken
// longer than the ten minutes the servers get), unless build is false, then
// starts the servers.
func StartServers(releases []string, build bool) *Servers {
	s := &Servers{Clusters: map[string]*testcluster.Cluster{}, Errs: map[string]error{}}
	var ready []string
	for _, rel := range releases {
		if build {
			if _, err := Binary(rel); err != nil {
				s.Errs[rel] = err
				continue
			}
		}
		ready = append(ready, rel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, rel := range ready {
		if err := s.start(ctx, rel); err != nil {
			s.Errs[rel] = err
		}
	}
	return s
}

func (s *Servers) start(ctx context.Context, rel string) error {
	crds, err := CRDs(rel)
	if err != nil {
		return err
	}
	c, err := testcluster.Start(ctx, testcluster.Options{SkipCRDs: true})
	if err != nil {
		return err
	}
	s.Clusters[rel] = c
	return c.InstallCRDYAML(ctx, crds)
}

// Stop stops every server.
func (s *Servers) Stop() {
	for _, c := range s.Clusters {
		c.Stop()
	}
}

// Suite is a test package's servers (internal/realtest, internal/explore):
// its TestMain starts them unless -short, and its tests get theirs from
// Cluster.
type Suite struct {
	skip string
	srv  *Servers
}

// Short reports -short: the TestMain then runs its tests without servers,
// and Cluster and SkipIfShort skip them.
func (s *Suite) Short() bool {
	if testing.Short() {
		s.skip = "-short: builds Longhorn's controllers and starts API servers"
	}
	return s.skip != ""
}

// Start starts a server per release (StartServers).
func (s *Suite) Start(releases []string, build bool) { s.srv = StartServers(releases, build) }

// Run is the body of a TestMain: under -short the tests alone (they skip),
// otherwise Start, the tests, Stop.
func (s *Suite) Run(m *testing.M, releases []string, build bool) int {
	if s.Short() {
		return m.Run()
	}
	s.Start(releases, build)
	defer s.Stop()
	return m.Run()
}

// Stop stops the servers Start started.
func (s *Suite) Stop() {
	if s.srv != nil {
		s.srv.Stop()
	}
}

// SkipIfShort skips t under -short.
func (s *Suite) SkipIfShort(t testing.TB) {
	t.Helper()
	if s.skip != "" {
		t.Skip(s.skip)
	}
}

// Cluster is rel's server. It skips t under -short or when rel was not
// selected, and fails it when rel's server did not start.
func (s *Suite) Cluster(t testing.TB, rel string) *testcluster.Cluster {
	t.Helper()
	s.SkipIfShort(t)
	if err := s.srv.Errs[rel]; err != nil {
		t.Fatalf("Longhorn %s: %v", rel, err)
	}
	c := s.srv.Clusters[rel]
	if c == nil {
		t.Skipf("Longhorn %s not selected", rel)
	}
	return c
}
