// Package testenv is the one place tests (and `make demo`) get Longhorn state
// from: builders of typed Longhorn objects and of support bundles, the
// catalogue of named volume scenarios (each written directly or reached
// through the simulator), a simulated Longhorn per test, and the checks on
// volume state the tests share. Its subpackage clitest runs the plugin's
// command tree in-process. The mechanisms it builds on stay packages of their
// own: internal/testcluster and internal/kubeserver (API servers),
// internal/lhsim (the simulator). It imports neither API server: `make fuzz`
// links it into an instrumented build, where one would cost 15 minutes cold.
package testenv
