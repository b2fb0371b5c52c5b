module github.com/longhorn-engines/kubectl-longhorn-engines/test/longhorn/control

go 1.22
