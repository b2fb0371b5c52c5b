package testenv_test

import (
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testcluster"
	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

// testenv itself stays free of the API server (the fuzz build instruments
// every package it links); the check that the test cluster is a Target
// lives here.
var _ testenv.Target = (*testcluster.Cluster)(nil)
