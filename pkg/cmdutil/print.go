package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// PrintJSON writes v as kubectl's -o json does: indented four spaces, with a
// final newline. Every report of -o json goes through it.
func PrintJSON(out io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// PrintYAML writes v as kubectl's -o yaml does: through its JSON form, so
// the json tags name the fields and -o json and -o yaml agree.
func PrintYAML(out io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return err
	}
	_, err = out.Write(y)
	return err
}
