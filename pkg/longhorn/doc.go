// Package longhorn models the few fields of Longhorn's custom resources that
// kubectl-longhorn-engines reads and writes. It deliberately does not depend on
// longhorn-manager: each type decodes from the JSON the API server returns for
// longhorn.io/v1beta2 (Longhorn 1.3 and later), ignores fields it does not know,
// and keeps the field set of every release from 1.3 to 1.12 side by side
// (for example spec.engineImage up to 1.8 and spec.image from 1.6).
package longhorn
