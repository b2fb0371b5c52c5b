// Command gendocs writes one Markdown page per command of
// `kubectl longhorn-engines` into docs/commands, from the same cobra tree the
// binary runs, so the pages cannot say something the help does not.
//
//	go run ./hack/gendocs                 # rewrite docs/commands
//	go run ./hack/gendocs -check          # exit 1 if docs/commands is out of date
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra/doc"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmd"
)

func main() {
	out := flag.String("out", "docs/commands", "folder of the generated pages")
	check := flag.Bool("check", false, "compare instead of writing; exit 1 on any difference")
	flag.Parse()
	if err := run(*out, *check); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(out string, check bool) error {
	pages, err := generate()
	if err != nil {
		return err
	}
	current, err := readPages(out)
	if err != nil {
		return err
	}
	if check {
		if drift := diff(pages, current); len(drift) > 0 {
			return fmt.Errorf("%s is out of date (%s): run 'make docs' and commit the result", out, strings.Join(drift, ", "))
		}
		return nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name := range current {
		if _, ok := pages[name]; !ok {
			if err := os.Remove(filepath.Join(out, name)); err != nil {
				return err
			}
		}
	}
	for name, body := range pages {
		if bytes.Equal(current[name], body) {
			continue
		}
		if err := os.WriteFile(filepath.Join(out, name), body, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate renders every page in a scratch folder and returns them by file
// name.
func generate() (map[string][]byte, error) {
	// Defaults derived from the environment (--cache-dir is under $HOME)
	// must not depend on who runs the generator.
	if err := os.Setenv("HOME", "$HOME"); err != nil {
		return nil, err
	}
	root := cmd.NewRootCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	root.DisableAutoGenTag = true
	tmp, err := os.MkdirTemp("", "gendocs-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := doc.GenMarkdownTree(root, tmp); err != nil {
		return nil, err
	}
	return readPages(tmp)
}

func readPages(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	pages := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".md" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		pages[e.Name()] = b
	}
	return pages, nil
}

// diff names the pages that differ, are missing or should not be there.
func diff(want, have map[string][]byte) []string {
	var out []string
	for name, body := range want {
		b, ok := have[name]
		switch {
		case !ok:
			out = append(out, name+" missing")
		case !bytes.Equal(b, body):
			out = append(out, name+" differs")
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			out = append(out, name+" is not a command")
		}
	}
	sort.Strings(out)
	return out
}
