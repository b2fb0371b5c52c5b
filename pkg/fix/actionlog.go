package fix

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ActionLogName is the action log's file name in the backup folder.
const ActionLogName = "actions.log"

// ActionLog is an append-only record of what fix decided and did. Every
// write to the cluster is logged before it is sent and again with its
// result, each line one append and synced to disk (a crash can cut at most
// the last line, never rewrite an earlier one), so a run cut short (signal, lost API
// server, crash) still leaves a record of every request that may have
// reached the server.
type ActionLog struct {
	mu  sync.Mutex
	f   *os.File
	now func() time.Time
	err error
}

// OpenActionLog opens (or creates) path for appending.
func OpenActionLog(path string) (*ActionLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the action log: %w", err)
	}
	// The log's name must survive a crash as its lines do.
	if err := syncDir(filepath.Dir(path)); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("syncing the backup folder: %w", err)
	}
	return &ActionLog{f: f, now: time.Now}, nil
}

// Printf appends one line: an RFC 3339 time, then the message on one line.
// It returns the first write error, which callers treat as a reason not to
// write to the cluster.
func (l *ActionLog) Printf(format string, args ...any) error {
	if l == nil {
		return nil
	}
	msg := strings.Join(strings.Fields(fmt.Sprintf(format, args...)), " ")
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	line := l.now().UTC().Format(time.RFC3339) + " " + msg + "\n"
	if _, err := l.f.WriteString(line); err != nil {
		l.err = fmt.Errorf("writing the action log: %w", err)
		return l.err
	}
	if err := l.f.Sync(); err != nil {
		l.err = fmt.Errorf("syncing the action log: %w", err)
	}
	return l.err
}

// Close closes the file.
func (l *ActionLog) Close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
