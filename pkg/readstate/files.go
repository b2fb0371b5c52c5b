package readstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// Stdin is the file name that reads standard input, as in kubectl -f -.
const Stdin = "-"

// fileExts are the files read from a folder given with -f, as kubectl does.
var fileExts = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// LoadOffline reads the support bundle when bundle is set and otherwise the
// files (- for stdin): the offline input of scan, describe and preflight.
func LoadOffline(ctx context.Context, bundle string, files []string, stdin io.Reader, o OfflineOptions) (*Offline, error) {
	if bundle != "" {
		return LoadBundle(ctx, bundle, o)
	}
	return LoadFiles(ctx, files, stdin, o)
}

// LoadFiles reads Longhorn objects from `kubectl get ... -o yaml|json`
// output: single objects, Lists and multi-document YAML, in any mix, from
// files, folders (their .yaml, .yml and .json files) and stdin ("-"). A file
// that cannot be opened or parsed is reported and the others are still read.
//
// Every string read is escaped for a terminal (safetext.All), as Load does.
func LoadFiles(ctx context.Context, names []string, stdin io.Reader, o OfflineOptions) (*Offline, error) {
	off, err := readFiles(ctx, names, stdin, o)
	if off != nil {
		safetext.All(off)
	}
	return off, err
}

func readFiles(ctx context.Context, names []string, stdin io.Reader, o OfflineOptions) (*Offline, error) {
	warnf := o.warnf()
	c := newCollector()
	var newest time.Time
	useNow := false
	incomplete := []string{}
	var unread []string
	read := 0
	for _, name := range expandFileArgs(names, warnf) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		display := name
		if name == Stdin {
			display, useNow = "stdin", true
		}
		before, beforeW := c.objects, c.workloadObjects
		probs, rerr := readInput(ctx, name, stdin, c, o.maxFileBytes(), func(mod time.Time) { newest = latest(newest, mod) })
		var pe *fs.PathError
		if errors.As(rerr, &pe) && pe.Op == "open" {
			warnf("%s", pathErrorLine(name, rerr))
			unread = append(unread, display)
			continue
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			warnf("%s: read error (%v); the objects before it were used", display, rerr)
			incomplete = append(incomplete, display)
		}
		read++
		reportProblems(warnf, display, probs)
		if probs.total > 0 {
			incomplete = append(incomplete, display)
		}
		if c.objects == before && c.workloadObjects == beforeW && probs.total == 0 && rerr == nil {
			warnf("%s: no Longhorn objects (%s kinds %s)", display, "longhorn.io/v1beta2", kindList())
		}
	}
	if c.objects == 0 {
		if read == 0 {
			return nil, errors.New("none of the given files could be read")
		}
		return nil, errors.New("no Longhorn objects found in the given files")
	}
	ns, err := chooseNamespace(c.namespaces(), o.Namespace, "the files")
	if err != nil {
		return nil, err
	}
	st, setting, ims := c.stateFor(ns)
	st.InstanceManagersRead = ims
	// Pods are known for the namespaces they were given in; CSI
	// attachments when any was given.
	st.Workloads = c.workloads(nil, false, "in the files")
	applyVersion(st, setting, "the files")
	if !st.Version.Known() {
		warnf("Longhorn version unknown (%s): findings are reported, no repair is proposed; add the output of 'kubectl get settings.longhorn.io %s -n %s -o yaml'",
			st.VersionSource, "current-longhorn-version", ns)
	}
	// Ages are relative to when the files were written, unless one came
	// from stdin.
	st.Now = newest.UTC()
	if useNow || newest.IsZero() {
		st.Now = time.Now().UTC()
	}
	off := &Offline{State: st, Source: "files"}
	switch {
	case len(st.Volumes) == 0:
		warnf("no Volume objects in the files: nothing to classify; add the output of 'kubectl get volumes.longhorn.io -n %s -o yaml'", ns)
		off.OrphansUnreliable = "no Volume objects were given"
		off.incomplete("no Volume objects were given")
	case len(incomplete) > 0:
		off.OrphansUnreliable = strings.Join(incomplete, ", ") + " not read completely"
	}
	for _, f := range unread {
		off.incomplete("%s could not be read", f)
	}
	for _, f := range dedupe(incomplete) {
		off.incomplete("%s was not read completely", f)
	}
	if err := selectOffline(st, o); err != nil {
		return nil, err
	}
	for _, m := range missingKinds(st) {
		off.incomplete("%s", m)
	}
	return off, nil
}

// readInput decodes one file or stdin into c.
func readInput(ctx context.Context, name string, stdin io.Reader, c *collector, limit int64, modTime func(time.Time)) (*problems, error) {
	probs := &problems{}
	r := stdin
	if name != Stdin {
		f, err := os.Open(name)
		if err != nil {
			return probs, err
		}
		defer func() { _ = f.Close() }()
		if fi, err := f.Stat(); err == nil {
			if fi.IsDir() {
				return probs, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a folder")}
			}
			modTime(fi.ModTime())
		}
		r = f
	}
	err := decodeStream(newCapReader(r, limit), probs, func(obj map[string]any) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := c.add(obj, "", ""); err != nil && !errors.Is(err, errNotLonghorn) {
			probs.add("%v", err)
		}
		return nil
	})
	return probs, err
}

// expandFileArgs replaces folders by their YAML and JSON files (not
// recursive, like kubectl without -R) and keeps stdin once.
func expandFileArgs(names []string, warnf func(string, ...any)) []string {
	var out []string
	stdinSeen := false
	for _, n := range names {
		if n == Stdin {
			if !stdinSeen {
				out = append(out, n)
			}
			stdinSeen = true
			continue
		}
		fi, err := os.Stat(n)
		if err != nil || !fi.IsDir() {
			out = append(out, n) // opening reports the error
			continue
		}
		entries, err := os.ReadDir(n)
		if err != nil {
			warnf("%s", pathErrorLine(n, err))
			continue
		}
		var found []string
		for _, e := range entries {
			if !e.IsDir() && fileExts[strings.ToLower(filepath.Ext(e.Name()))] {
				found = append(found, filepath.Join(n, e.Name()))
			}
		}
		if len(found) == 0 {
			warnf("%s: folder without .yaml, .yml or .json files", n)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out
}

// pathErrorLine says "name: reason" without repeating the operation.
func pathErrorLine(name string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", name, pe.Err)
	}
	return fmt.Sprintf("%s: %v", name, err)
}

func kindList() string {
	var ks []string
	for _, r := range readOrder {
		ks = append(ks, r.Kind)
	}
	return strings.Join(ks, ", ")
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
