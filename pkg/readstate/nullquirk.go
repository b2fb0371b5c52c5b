package readstate

// nullString is how support-bundle-kit writes an empty value. Before it
// encodes a List to YAML it rewrites the JSON text: every "" becomes "null",
// and a JSON null followed by a comma becomes "null" too. So
// spec.nodeID: "" comes back as the string "null", and status.conditions:
// null comes back as a string where a list belongs.
const nullString = "null"

// normalizeNull undoes that quirk on a decoded document, in place: every
// string value equal to "null" becomes a JSON null. Decoding null leaves a Go
// string empty, a pointer (deletionTimestamp) nil and a slice or map empty,
// which is what the object held before the kit wrote it.
//
// It applies to every input, not only bundles, because a bundle's files are
// also passed with -f. The cost is that a real string "null" reads as empty:
// Longhorn never uses that value for the fields we read, and Kubernetes names
// are never "null" in practice. Map keys are left alone.
func normalizeNull(v any) any {
	switch t := v.(type) {
	case string:
		if t == nullString {
			return nil
		}
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeNull(e)
		}
	case []any:
		for i, e := range t {
			t[i] = normalizeNull(e)
		}
	}
	return v
}
