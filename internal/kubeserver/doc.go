// Package kubeserver runs Kubernetes' own kube-apiserver for the tests that
// need what internal/testcluster's apiextensions-only server does not serve:
// core/v1 (Namespaces, Pods, Nodes, PVs, PVCs, ConfigMaps, ServiceAccounts,
// Events), storage.k8s.io VolumeAttachments, batch Jobs, real RBAC
// (Roles and bindings applied as objects, service account tokens) and the
// admission chain.
//
// The server is the binary of the nested module test/kubeapiserver, built
// once into bin/ (the Go build cache makes it instant after the first time)
// and started as a child process per test package with its own embedded
// etcd on unix sockets; it listens on 127.0.0.1 only. No controller-manager
// runs: no garbage collection, no default service accounts, no node
// lifecycle. Longhorn's CRDs (the embedded ones of internal/testcluster) and
// the longhorn-system namespace are installed at start.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) {
//		kubeserver.Main(m, func(s *kubeserver.Server) { server = s })
//	}
//
// Clients: RESTConfig (admin, group system:masters), KubeconfigPath (admin)
// and ServiceAccountKubeconfig, which makes a service account's token
// through the TokenRequest API, so a test runs a command under exactly the
// Role bound to it.
package kubeserver
