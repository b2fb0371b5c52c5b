package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"sigs.k8s.io/yaml"
)

// ReleaseBuild is the part of .goreleaser.yaml that decides what the
// plugin's binary is and how it compiles.
type ReleaseBuild struct {
	Main    string   `json:"main"`
	Binary  string   `json:"binary"`
	Env     []string `json:"env"`
	Flags   []string `json:"flags"`
	Ldflags []string `json:"ldflags"` // goreleaser templates
}

// ModuleRoot is the repository's root, found from this file's path.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// ReadReleaseBuild reads the one build of .goreleaser.yaml.
func ReadReleaseBuild() (ReleaseBuild, error) {
	b, err := os.ReadFile(filepath.Join(ModuleRoot(), ".goreleaser.yaml"))
	if err != nil {
		return ReleaseBuild{}, err
	}
	var cfg struct {
		Builds []ReleaseBuild `json:"builds"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return ReleaseBuild{}, fmt.Errorf(".goreleaser.yaml: %w", err)
	}
	if len(cfg.Builds) != 1 {
		return ReleaseBuild{}, fmt.Errorf(".goreleaser.yaml: want one build, have %d", len(cfg.Builds))
	}
	return cfg.Builds[0], nil
}

// BuildPlugin builds this tree's plugin to out with the release's
// environment and flags, and ldflags (rendered by the caller, or none).
// `make build` compiles with the same two, so one build cache serves the
// tests, the build and goreleaser's snapshot: only their links differ (a
// cold CI compiled the plugin's dependencies twice before).
func BuildPlugin(ctx context.Context, out string, ldflags ...string) error {
	rb, err := ReadReleaseBuild()
	if err != nil {
		return err
	}
	args := append([]string{"build"}, rb.Flags...)
	if len(ldflags) > 0 {
		args = append(args, "-ldflags", strings.Join(ldflags, " "))
	}
	args = append(args, "-o", out, rb.Main)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = ModuleRoot()
	cmd.Env = append(os.Environ(), rb.Env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}
