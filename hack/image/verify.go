package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// runVerify checks the layout against dist/: every platform asked for is in
// the index, and each image is what build promises. On this machine's
// platform the binary taken out of the image is also run.
func runVerify(args []string) error {
	fs, dist, layoutDir, platforms := newFlags("verify")
	rel, plats, err := parseRelease(fs, args, dist, platforms)
	if err != nil {
		return err
	}
	l := ociLayout(*layoutDir)
	var marker struct {
		Version string `json:"imageLayoutVersion"`
	}
	if err := readJSON(filepath.Join(*layoutDir, "oci-layout"), &marker); err != nil || marker.Version != "1.0.0" {
		return fmt.Errorf("%s is not an OCI image layout 1.0.0 (%v)", *layoutDir, err)
	}
	var top ocispec.Index
	if err := readJSON(filepath.Join(*layoutDir, "index.json"), &top); err != nil {
		return err
	}
	var idxDesc *ocispec.Descriptor
	for i, d := range top.Manifests {
		if d.Annotations[ocispec.AnnotationRefName] == rel.ref() {
			idxDesc = &top.Manifests[i]
		}
	}
	if idxDesc == nil || idxDesc.MediaType != ocispec.MediaTypeImageIndex {
		return fmt.Errorf("index.json names no image index %s", rel.ref())
	}
	var idx ocispec.Index
	if err := l.json(*idxDesc, &idx); err != nil {
		return err
	}
	if idx.SchemaVersion != 2 || idx.MediaType != ocispec.MediaTypeImageIndex {
		return fmt.Errorf("image index: schemaVersion %d, mediaType %q", idx.SchemaVersion, idx.MediaType)
	}
	if err := checkLabels("index annotations", idx.Annotations, rel); err != nil {
		return err
	}
	if len(idx.Manifests) != len(plats) {
		return fmt.Errorf("index has %d images, want %d (%s)", len(idx.Manifests), len(plats), strings.Join(plats, ", "))
	}
	for _, plat := range plats {
		var found *ocispec.Descriptor
		for i, d := range idx.Manifests {
			if d.Platform != nil && d.Platform.OS+"/"+d.Platform.Architecture == plat {
				found = &idx.Manifests[i]
			}
		}
		if found == nil {
			return fmt.Errorf("index has no image for %s", plat)
		}
		if err := l.verifyImage(*found, plat, rel); err != nil {
			return fmt.Errorf("%s: %w", plat, err)
		}
	}
	fmt.Printf("image-check: OK (%s@%s: %s)\n", rel.ref(), idxDesc.Digest, strings.Join(plats, ", "))
	return nil
}

func (l ociLayout) verifyImage(d ocispec.Descriptor, plat string, rel release) error {
	if d.MediaType != ocispec.MediaTypeImageManifest {
		return fmt.Errorf("manifest media type %q", d.MediaType)
	}
	var m ocispec.Manifest
	if err := l.json(d, &m); err != nil {
		return err
	}
	if m.SchemaVersion != 2 || m.MediaType != ocispec.MediaTypeImageManifest || m.Config.MediaType != ocispec.MediaTypeImageConfig {
		return fmt.Errorf("manifest: schemaVersion %d, mediaType %q, config %q", m.SchemaVersion, m.MediaType, m.Config.MediaType)
	}
	var c ocispec.Image
	if err := l.json(m.Config, &c); err != nil {
		return err
	}
	if c.OS+"/"+c.Architecture != plat {
		return fmt.Errorf("config is for %s/%s", c.OS, c.Architecture)
	}
	if err := checkLabels("config labels", c.Config.Labels, rel); err != nil {
		return err
	}
	if len(c.Config.Entrypoint) != 1 || c.Config.Entrypoint[0] != binaryPath || len(c.Config.Cmd) != 0 {
		return fmt.Errorf("entrypoint %q cmd %q, want [%s] and no cmd", c.Config.Entrypoint, c.Config.Cmd, binaryPath)
	}
	user, _, _ := strings.Cut(c.Config.User, ":")
	if n, err := strconv.Atoi(user); err != nil || n == 0 {
		return fmt.Errorf("user %q is not a numeric non-root user (runAsNonRoot needs a number)", c.Config.User)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != ocispec.MediaTypeImageLayerGzip || len(c.RootFS.DiffIDs) != 1 {
		return fmt.Errorf("want exactly one gzip layer and one diff_id, have %d layers and %d diff_ids", len(m.Layers), len(c.RootFS.DiffIDs))
	}
	gz, err := l.blob(m.Layers[0])
	if err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return err
	}
	layerTar, err := io.ReadAll(zr)
	if err != nil {
		return err
	}
	if got := digest.FromBytes(layerTar); got != c.RootFS.DiffIDs[0] {
		return fmt.Errorf("layer diff_id %s, config says %s", got, c.RootFS.DiffIDs[0])
	}
	inImage, err := fileInTar(layerTar, strings.TrimPrefix(binaryPath, "/"), 0o755)
	if err != nil {
		return err
	}
	built, err := os.ReadFile(rel.Binaries[plat])
	if err != nil {
		return err
	}
	if sha256hex(inImage) != sha256hex(built) {
		return fmt.Errorf("%s in the image (sha256 %s) is not goreleaser's %s (sha256 %s)", binaryPath, sha256hex(inImage), rel.Binaries[plat], sha256hex(built))
	}
	passwd, err := fileInTar(layerTar, "etc/passwd", 0o644)
	if err != nil {
		return err
	}
	if !strings.Contains(string(passwd), fmt.Sprintf(":x:%s:", user)) {
		return fmt.Errorf("/etc/passwd names no user %s", user)
	}
	fmt.Printf("%s: manifest %s, user %s, entrypoint %s, binary sha256 %s (goreleaser's)\n", plat, d.Digest, c.Config.User, binaryPath, sha256hex(inImage))
	if plat != runtime.GOOS+"/"+runtime.GOARCH {
		return nil
	}
	return runVersion(inImage, rel)
}

// runVersion runs the binary taken out of the image.
func runVersion(bin []byte, rel release) error {
	dir, err := os.MkdirTemp("", "image-check")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, binaryName)
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		return err
	}
	out, err := exec.Command(path, "version").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s version: %w: %s", binaryName, err, out)
	}
	fmt.Printf("  %s", out)
	want := fmt.Sprintf("%s %s (commit %s,", binaryName, rel.Version, rel.Commit)
	if !strings.HasPrefix(string(out), want) {
		return fmt.Errorf("version prints %q, want it to start with %q", out, want)
	}
	return nil
}

func checkLabels(what string, got map[string]string, rel release) error {
	want := map[string]string{
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.version":  rel.Version,
		"org.opencontainers.image.revision": rel.Commit,
	}
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("%s: %s is %q, want %q", what, k, got[k], v)
		}
	}
	return nil
}

func fileInTar(t []byte, name string, mode int64) ([]byte, error) {
	tr := tar.NewReader(bytes.NewReader(t))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("layer has no %s", name)
		}
		if err != nil {
			return nil, err
		}
		if h.Name != name {
			continue
		}
		if h.Typeflag != tar.TypeReg || h.Mode&0o7777 != mode || h.Uid != 0 {
			return nil, fmt.Errorf("%s: type %c mode %o uid %d, want a regular file, mode %o, owned by root", name, h.Typeflag, h.Mode, h.Uid, mode)
		}
		return io.ReadAll(tr)
	}
}

// ociLayout reads blobs by digest, checking size and digest.
type ociLayout string

func (l ociLayout) blob(d ocispec.Descriptor) ([]byte, error) {
	if err := d.Digest.Validate(); err != nil || d.Digest.Algorithm() != digest.SHA256 {
		return nil, fmt.Errorf("digest %q is not sha256", d.Digest)
	}
	b, err := os.ReadFile(filepath.Join(string(l), "blobs", "sha256", d.Digest.Encoded()))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != d.Size || d.Digest.Algorithm().FromBytes(b) != d.Digest {
		return nil, fmt.Errorf("blob %s: size %d (descriptor %d) or digest mismatch", d.Digest, len(b), d.Size)
	}
	return b, nil
}

func (l ociLayout) json(d ocispec.Descriptor, v any) error {
	b, err := l.blob(d)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func sha256hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
