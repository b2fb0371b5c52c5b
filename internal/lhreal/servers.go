package lhreal

import (
	"context"
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
