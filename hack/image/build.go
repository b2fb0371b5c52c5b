package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func runBuild(args []string) error {
	fs, dist, layoutDir, platforms := newFlags("build")
	push := fs.String("push", "", "also push the index to this reference (e.g. "+repository+":vX.Y.Z)")
	rel, plats, err := parseRelease(fs, args, dist, platforms)
	if err != nil {
		return err
	}
	created, err := time.Parse(time.RFC3339, rel.Date)
	if err != nil {
		return fmt.Errorf("date in dist/metadata.json: %w", err)
	}
	idx, err := buildIndex(rel, plats, created.UTC())
	if err != nil {
		return err
	}
	if err := os.RemoveAll(*layoutDir); err != nil {
		return err
	}
	p, err := layout.Write(*layoutDir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": rel.ref(),
	})); err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s (%s) in %s\n", rel.ref(), d, strings.Join(plats, ", "), *layoutDir)
	if *push != "" {
		ref, err := name.ParseReference(*push)
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(ref, idx, remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		fmt.Printf("pushed %s@%s\n", ref, d)
	}
	return nil
}

func labels(rel release, created time.Time) map[string]string {
	return map[string]string{
		"org.opencontainers.image.source":      source,
		"org.opencontainers.image.url":         source,
		"org.opencontainers.image.version":     rel.Version,
		"org.opencontainers.image.revision":    rel.Commit,
		"org.opencontainers.image.created":     created.Format(time.RFC3339),
		"org.opencontainers.image.title":       "kubectl-longhorn-engines",
		"org.opencontainers.image.description": "kubectl longhorn-engines: find and repair Longhorn volumes with two active engines",
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
}

func buildIndex(rel release, plats []string, created time.Time) (v1.ImageIndex, error) {
	lbl := labels(rel, created)
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, plat := range plats {
		goos, goarch, _ := strings.Cut(plat, "/")
		img, err := buildImage(rel.Binaries[plat], goos, goarch, lbl, created)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", plat, err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: goos, Architecture: goarch}},
		})
	}
	return mutate.Annotations(idx, lbl).(v1.ImageIndex), nil
}

func buildImage(binary, goos, goarch string, lbl map[string]string, created time.Time) (v1.Image, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	layerTar, err := rootfs(bin, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: created},
			CreatedBy: "hack/image: " + binaryPath + ", /etc/passwd, /etc/group",
			Comment:   "no base image",
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = goos, goarch
	cf.Created = v1.Time{Time: created}
	cf.Config.User = fmt.Sprintf("%d:%d", uid, uid)
	cf.Config.Entrypoint = []string{binaryPath}
	cf.Config.Cmd = nil
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=/usr/local/bin"}
	cf.Config.Labels = lbl
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, lbl).(v1.Image), nil
}

// rootfs is the one layer: the binary and the user database. Owned by root
// and not writable by the user the image runs as.
func rootfs(bin []byte, mtime time.Time) ([]byte, error) {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", uid, uid)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(n string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: n, Mode: 0o755, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(n string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []func() error{
		func() error { return dir("etc/") },
		func() error { return file("etc/passwd", 0o644, []byte(passwd)) },
		func() error { return file("etc/group", 0o644, []byte(group)) },
		func() error { return dir("usr/") },
		func() error { return dir("usr/local/") },
		func() error { return dir("usr/local/bin/") },
		func() error { return file(strings.TrimPrefix(binaryPath, "/"), 0o755, bin) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
