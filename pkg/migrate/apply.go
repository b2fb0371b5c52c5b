package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/cmdutil"
)

// conflictBackoff paces deciding a step again after a 409: Longhorn writes
// volumes and attachments often, so one conflict is ordinary, and while a
// node is down it may rewrite a volume several times a second. About 20 s in
// all before the step gives up.
var conflictBackoff = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 10}

// errNothingToRollBack: the migration is no longer in place (Longhorn or
// someone else withdrew it), so there is no write to make.
var errNothingToRollBack = errors.New("nothing to roll back")

// send makes one step's write: read fresh, let build decide (and re-check
// whatever the step depends on), send the patch pinned to the resourceVersion
// it was decided on; on 409 Conflict, start over from a fresh read. With
// --dry-run=client nothing is sent; with server the API server checks it
// and persists nothing. The change line goes to stdout, as kubectl prints it.
func (s *session) send(ctx context.Context, build func(*snapshot) (write, error)) (*snapshot, error) {
	var snap *snapshot
	err := retry.RetryOnConflict(conflictBackoff, func() error {
		sn, err := s.read(ctx)
		if err != nil {
			return err
		}
		snap = sn
		w, err := build(sn)
		if err != nil {
			return err
		}
		err = s.apply(ctx, w)
		if apierrors.IsConflict(err) {
			s.infof("  %s %q changed since it was read (conflict); deciding again from a fresh read", w.res.Qualified(), w.name)
		}
		return err
	})
	return snap, err
}

// dryRunStep is a step under --dry-run: the write build makes from snap,
// shown under title (printed for client, sent with dryRun=All for server).
// what names the step in an error.
func (s *session) dryRunStep(ctx context.Context, snap *snapshot, title, what string, build func(*snapshot) (write, error)) error {
	w, err := build(snap)
	if err != nil {
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, err)
	}
	s.infof("%s", title)
	if err := s.apply(ctx, w); err != nil {
		return cmdutil.WithCode(cmdutil.ExitNeedsAction, describeErr(what+" (dry run)", err))
	}
	return nil
}

// apply sends one write (or, with --dry-run=client, only prints it).
func (s *session) apply(ctx context.Context, w write) error {
	body, err := w.patch()
	if err != nil {
		return err
	}
	s.infof("  %s (resourceVersion %s)", w.what, w.resourceVersion)
	if s.o.dryRun != cmdutil.DryRunClient {
		opts := metav1.PatchOptions{FieldManager: s.o.FieldManager, DryRun: s.o.dryRun.Sent()}
		_, err = s.c.Dynamic.Resource(w.res.GVR()).Namespace(s.ns).Patch(ctx, w.name, types.MergePatchType, body, opts)
		if err != nil {
			if apierrors.IsConflict(err) {
				return err
			}
			return cmdutil.Explain(err, "patch", w.res.GroupResource(), s.ns)
		}
	}
	s.outf("%s %q patched%s", w.res.Qualified(), w.name, s.o.dryRun.Suffix())
	return nil
}

// landed reads the volume back after a write whose request failed, since a
// lost answer can hide a write the server applied, and tells by applied
// whether it did. The read outlives a cancelled ctx.
func (s *session) landed(ctx context.Context, applied func(*snapshot) bool) (bool, error) {
	sn, err := s.read(context.WithoutCancel(ctx))
	if err != nil {
		return false, err
	}
	return applied(sn), nil
}

// describeErr keeps the API's sentence but says which step it stopped.
func describeErr(step string, err error) error {
	return fmt.Errorf("%s: %w", step, err)
}
