// Command image builds the plugin's container image from the binaries
// goreleaser put in dist/, without a Docker daemon and without pulling a base
// image, and checks an image it built:
//
//	go run . build  -dist ../../dist -layout ../../bin/image [-platforms linux/amd64,linux/arm64] [-push REF]
//	go run . verify -dist ../../dist -layout ../../bin/image [-platforms linux/amd64]
//
// The image is an OCI image index with one image per platform. Each image
// has no base: one layer with the static binary at /usr/local/bin and an
// /etc/passwd and /etc/group that name the numeric non-root user it runs as
// (65532, as distroless' nonroot), the binary as entrypoint and the OCI
// labels source, version, revision and created. Every timestamp is the date
// goreleaser recorded in dist/metadata.json, so one goreleaser run gives the
// same digests however often the image is built from it.
//
// build writes an OCI image layout (a folder; index.json names the index
// with the tag as org.opencontainers.image.ref.name) and, with -push, also
// pushes the index to a registry with the credentials of ~/.docker/config.json.
// verify reads the layout as plain files (not through the library that
// wrote it) and checks what docs/install.md promises of the image.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The image's fixed properties; deploy/guard-job.yaml and docs/install.md
// name the same repository.
const (
	repository = "ghcr.io/longhorn-engines/kubectl-longhorn-engines"
	source     = "https://github.com/longhorn-engines/kubectl-longhorn-engines"
	binaryName = "kubectl-longhorn_engines"
	binaryPath = "/usr/local/bin/" + binaryName
	uid        = 65532
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "error: usage: image build|verify [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(os.Args[2:])
	case "verify":
		err = runVerify(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: build or verify", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

// release is what goreleaser recorded in dist/ about one run.
type release struct {
	Tag      string
	Version  string
	Commit   string
	Date     string            // goreleaser's run date, RFC 3339
	Binaries map[string]string // "linux/amd64" -> path
}

// ref is where the release publishes the image.
func (r release) ref() string { return repository + ":" + r.Tag }

func readRelease(dist string) (release, error) {
	var meta struct {
		Tag     string `json:"tag"`
		Version string `json:"version"`
		Commit  string `json:"commit"`
		Date    string `json:"date"`
	}
	if err := readJSON(filepath.Join(dist, "metadata.json"), &meta); err != nil {
		return release{}, fmt.Errorf("%w (run goreleaser first: make release-check)", err)
	}
	var artifacts []struct {
		Name   string `json:"name"`
		Path   string `json:"path"`
		Goos   string `json:"goos"`
		Goarch string `json:"goarch"`
		Type   string `json:"type"`
	}
	if err := readJSON(filepath.Join(dist, "artifacts.json"), &artifacts); err != nil {
		return release{}, err
	}
	r := release{Tag: meta.Tag, Version: meta.Version, Commit: meta.Commit, Date: meta.Date, Binaries: map[string]string{}}
	if r.Tag == "" || r.Version == "" || r.Commit == "" || r.Date == "" {
		return release{}, errors.New("dist/metadata.json lacks tag, version, commit or date")
	}
	for _, a := range artifacts {
		if a.Type != "Binary" || a.Name != binaryName || a.Goos != "linux" {
			continue
		}
		p := a.Path
		// goreleaser records paths relative to the project root, where dist/ is.
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(filepath.Clean(dist)), p)
		}
		r.Binaries[a.Goos+"/"+a.Goarch] = p
	}
	return r, nil
}

// platforms are the platforms of list, each of which must have a binary.
func (r release) platforms(list string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, ok := r.Binaries[p]; !ok {
			return nil, fmt.Errorf("no %s binary for %s in dist/artifacts.json", binaryName, p)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, errors.New("-platforms is empty")
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func newFlags(name string) (*flag.FlagSet, *string, *string, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	dist := fs.String("dist", "dist", "goreleaser's dist folder")
	layoutDir := fs.String("layout", "bin/image", "OCI image layout folder")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list")
	return fs, dist, layoutDir, platforms
}

// parseRelease parses args, then reads the release in --dist and the
// platforms --platforms asks for: how build and verify start.
func parseRelease(fs *flag.FlagSet, args []string, dist, platforms *string) (release, []string, error) {
	if err := fs.Parse(args); err != nil {
		return release{}, nil, err
	}
	rel, err := readRelease(*dist)
	if err != nil {
		return release{}, nil, err
	}
	plats, err := rel.platforms(*platforms)
	return rel, plats, err
}
