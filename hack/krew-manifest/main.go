// Command krew-manifest renders the krew manifest template (.krew.yaml) the
// way krew-release-bot does on a release, but from local archives instead of
// downloads, so CI can validate and install exactly what a release would
// publish:
//
//	go run ./hack/krew-manifest -tag v0.0.0 -dist dist -o out/longhorn-engines.yaml
//
// The template sees .TagName; addURIAndSha "URL" .TagName renders URL (which
// may use {{ .TagName }} and {{ .Version }}) and emits "uri: URL" and, on the
// next line indented by four spaces, "sha256: <sum>" of the archive in -dist
// named like the URL's last element. With -allow-missing an archive that was
// not built gets the sha256 of empty input, so the manifest stays
// structurally valid for the platforms a snapshot did not build.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

func main() {
	tpl := flag.String("template", ".krew.yaml", "manifest template")
	tag := flag.String("tag", "", "release tag, e.g. v0.1.0 (required)")
	dist := flag.String("dist", "dist", "folder with the release archives")
	out := flag.String("o", "", "output file (default stdout)")
	allowMissing := flag.Bool("allow-missing", false, "use a placeholder sha256 for archives not in -dist")
	flag.Parse()
	if err := run(*tpl, *tag, *dist, *out, *allowMissing); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(tplPath, tag, dist, out string, allowMissing bool) error {
	if tag == "" {
		return fmt.Errorf("-tag is required")
	}
	src, err := os.ReadFile(tplPath)
	if err != nil {
		return err
	}
	r := renderer{tag: tag, dist: dist, allowMissing: allowMissing}
	b, err := r.render(string(src))
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, b, 0o644)
}

type renderer struct {
	tag, dist    string
	allowMissing bool
}

// values are what krew-release-bot passes to the inner URL template.
type values struct {
	TagName string
	Version string
}

var versionInTag = regexp.MustCompile(`\d+(\.\d+)+`)

func (r renderer) render(src string) ([]byte, error) {
	t, err := template.New("krew").Option("missingkey=error").Funcs(template.FuncMap{
		"addURIAndSha": r.addURIAndSha,
	}).Parse(src)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, struct{ TagName string }{r.tag}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (r renderer) addURIAndSha(urlTemplate, tag string) (string, error) {
	v := values{TagName: tag, Version: versionInTag.FindString(tag)}
	if v.Version == "" {
		v.Version = tag
	}
	t, err := template.New("uri").Option("missingkey=error").Parse(urlTemplate)
	if err != nil {
		return "", err
	}
	var uri strings.Builder
	if err := t.Execute(&uri, v); err != nil {
		return "", err
	}
	sum, err := r.sha256Of(path.Base(uri.String()))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("uri: %s\n    sha256: %s", uri.String(), sum), nil
}

func (r renderer) sha256Of(name string) (string, error) {
	f, err := os.Open(filepath.Join(r.dist, name))
	if os.IsNotExist(err) && r.allowMissing {
		fmt.Fprintf(os.Stderr, "warning: %s not in %s: placeholder sha256\n", name, r.dist)
		sum := sha256.Sum256(nil)
		return hex.EncodeToString(sum[:]), nil
	}
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
