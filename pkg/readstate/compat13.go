package readstate

import (
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// Longhorn 1.3 and earlier wrote their own support bundles: each
// yamls/longhorn/<plural>.yaml is a top-level sequence of Go objects encoded
// with yaml.v2, which ignores JSON tags and lower-cases Go field names
// (support-bundle-kit for Longhorn 1.3). So engines read
//
//	- typemeta: {...}
//	  objectmeta: {name: ..., deletiontimestamp: ...}
//	  spec: {instancespec: {volumename: ..., nodeid: ...}, active: true}
//	  status: {instancestatus: {currentstate: ...}, replicamodemap: {...}}
//
// translate13 rewrites such an object to the JSON shape of v1beta2: embedded
// structs are flattened, "objectmeta" becomes "metadata", and each key is
// renamed to the JSON name of the field whose lower-cased name it is. The
// names come from the model types themselves, so every field the detector
// reads is covered. Keys of maps that hold data (labels, replica names in
// replicaModeMap, process names in instances) are copied as they are.
//
// This layout is derived from Longhorn's types, not checked against a real
// 1.3 bundle; the loader says so when it reads one.

// embedded13 are Go embedded structs that yaml.v2 nests under their type name.
var embedded13 = map[string]bool{"typemeta": true, "instancespec": true, "instancestatus": true}

// dataMaps13 hold user or Longhorn data as keys: never rename inside them.
var dataMaps13 = map[string]bool{
	"labels": true, "annotations": true,
	"replicamodemap": true, "replicaaddressmap": true, "currentreplicaaddressmap": true, "upgradedreplicaaddressmap": true,
	"snapshots": true, "instances": true, "instanceengines": true, "instancereplicas": true,
	"disks": true, "diskstatus": true, "attachmenttickets": true, "attachmentticketstatuses": true, "parameters": true,
}

// jsonNames13 maps a lower-cased Go field name to its JSON name; ambiguous13
// lists lower-cased names claimed by two JSON names (a test keeps it empty).
var jsonNames13, ambiguous13 = buildJSONNames(
	longhorn.Volume{}, longhorn.Engine{}, longhorn.Replica{}, longhorn.VolumeAttachment{},
	longhorn.Node{}, longhorn.Setting{}, longhorn.InstanceManager{},
	metav1.ObjectMeta{}, metav1.OwnerReference{}, metav1.TypeMeta{},
)

func buildJSONNames(types ...any) (map[string]string, []string) {
	names := map[string]string{}
	var ambiguous []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag != "" && tag != "-" {
				low := strings.ToLower(tag)
				if prev, ok := names[low]; ok && prev != tag {
					ambiguous = append(ambiguous, low)
				}
				names[low] = tag
			}
			walk(f.Type)
		}
	}
	for _, v := range types {
		walk(reflect.TypeOf(v))
	}
	return names, ambiguous
}

// translate13 converts one decoded 1.3 object (see above).
func translate13(v any) any {
	switch t := v.(type) {
	case map[string]any:
		// yaml.v2 may write a metav1.Time as {time: ...}; unwrap it.
		if len(t) == 1 {
			if s, ok := t["time"].(string); ok {
				return s
			}
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			low := strings.ToLower(k)
			switch {
			case embedded13[low]:
				if m, ok := translate13(e).(map[string]any); ok {
					for k2, v2 := range m {
						if _, taken := out[k2]; !taken {
							out[k2] = v2
						}
					}
				}
				continue
			case low == "objectmeta":
				out["metadata"] = translate13(e)
				continue
			}
			name := k
			if j, ok := jsonNames13[low]; ok {
				name = j
			}
			if dataMaps13[low] {
				out[name] = e
			} else {
				out[name] = translate13(e)
			}
		}
		return out
	case []any:
		for i, e := range t {
			t[i] = translate13(e)
		}
		return t
	}
	return v
}
