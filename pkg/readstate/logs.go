package readstate

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/safetext"
)

// LogEvidence sums up, for one volume, the longhorn-manager log lines that
// show the two-active-engines failure (longhorn#6642).
type LogEvidence struct {
	Count     int
	FirstSeen time.Time // zero when no line carried a time
	LastSeen  time.Time
	// Message is the error text of the most recent line, e.g. "BUG: found
	// the second active engine x-e-1 besides x-e-0".
	Message string
	// Files are the log files (paths inside the bundle) with such lines.
	Files []string
}

// logNeedles are the errors GetCurrentEngineAndExtras and
// GetNewCurrentEngineAndExtras return when a volume has more than one active
// engine, and the one the confirm branch returns when it cannot pick the
// current engine among several (docs/troubleshooting-two-active-engines.md,
// "Log lines"). Each fails the volume's sync.
var logNeedles = [][]byte{
	[]byte("found the second active engine"),
	[]byte("found the second new active engine"),
	[]byte("cannot find the current engine for the switching"),
}

// maxLogLine bounds the part of a line that is kept; the errors we look for
// sit in the first few hundred bytes, and a runaway line must not cost memory.
const maxLogLine = 256 << 10

// maxMessage bounds the message kept in the evidence.
const maxMessage = 400

// logHit is one matching line.
type logHit struct {
	Namespace string // "" when the line names none
	Volume    string
	Time      time.Time
	Message   string
}

var (
	nameRE = `([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)`
	// 1.4.4+: a Volume=<ns>/<vol> field; JSON logs: "volume":"<ns>/<vol>".
	volumeFieldRE = regexp.MustCompile(`(?i)\bvolume"?[=:]"?` + nameRE + `/` + nameRE)
	// ≤1.5.1 message: "Error syncing Longhorn volume <ns>/<vol>" and
	// "Failed to sync Longhorn volume <ns>/<vol>".
	syncMsgRE = regexp.MustCompile(`Longhorn volume ` + nameRE + `/` + nameRE)
	// The wrapped error: "failed to sync <ns>/<vol>: ...".
	wrappedRE = regexp.MustCompile(`failed to sync ` + nameRE + `/` + nameRE + `:`)
	// "failed to reconcile engine/replica state for <vol>: ...".
	reconcileRE = regexp.MustCompile(`state for ` + nameRE + `:`)
	// The engine names: "<vol>-e-<suffix>".
	enginesRE = regexp.MustCompile(`second (?:new )?active engine ` + nameRE + ` besides ` + nameRE)
	// "... all engines for volume <vol>, ...".
	forVolumeRE = regexp.MustCompile(`for volume ` + nameRE)
	// logrus text and JSON time fields.
	logrusTimeRE = regexp.MustCompile(`\btime="([^"]+)"|"time":"([^"]+)"`)
)

// parseLogLine recognises a failing-sync line and says which volume it is
// about, when, and with which error. ok is false for every other line.
func parseLogLine(line []byte) (logHit, bool) {
	at := -1
	for _, n := range logNeedles {
		if i := bytes.Index(line, n); i >= 0 {
			at = i
			break
		}
	}
	if at < 0 {
		return logHit{}, false
	}
	s := string(line)
	var h logHit
	// support-bundle-kit asks the kubelet for timestamps: each line starts
	// with one (RFC 3339, nanoseconds), then the manager's own line.
	if sp := strings.IndexByte(s, ' '); sp > 0 && sp < 40 {
		if t, err := time.Parse(time.RFC3339Nano, s[:sp]); err == nil {
			h.Time = t.UTC()
		}
	}
	if h.Time.IsZero() {
		if m := logrusTimeRE.FindStringSubmatch(s); m != nil {
			v := m[1] + m[2]
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				h.Time = t.UTC()
			}
		}
	}
	h.Message = logMessage(s, at)
	h.Namespace, h.Volume = logVolume(s)
	return h, true
}

// logMessage cuts the error out of the line: from "BUG: " (or the needle)
// to the closing quote of the logfmt/JSON value or the end of the line.
func logMessage(s string, at int) string {
	start := at
	if i := strings.LastIndex(s[:at], "BUG: "); i >= 0 && at-i == len("BUG: ") {
		start = i
	}
	msg := s[start:]
	if i := strings.IndexAny(msg, "\"\r\n"); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimRight(msg, `\ `)
	return safetext.Cut(msg, maxMessage)
}

// logVolume finds the volume, most explicit form first.
func logVolume(s string) (ns, vol string) {
	for _, re := range []*regexp.Regexp{volumeFieldRE, syncMsgRE, wrappedRE} {
		if m := re.FindStringSubmatch(s); m != nil {
			return m[1], m[2]
		}
	}
	if m := reconcileRE.FindStringSubmatch(s); m != nil {
		return "", m[1]
	}
	if m := enginesRE.FindStringSubmatch(s); m != nil {
		return "", volumeOfEngineName(m[2])
	}
	if m := forVolumeRE.FindStringSubmatch(s); m != nil {
		return "", m[1]
	}
	return "", ""
}

// volumeOfEngineName derives the volume from "<vol>-e-<suffix>".
func volumeOfEngineName(name string) string {
	if i := strings.LastIndex(name, "-e-"); i > 0 {
		return name[:i]
	}
	return ""
}

// logScanner aggregates hits per volume for one Longhorn namespace, keeping
// nothing else: memory stays flat whatever the size of the logs.
type logScanner struct {
	namespace string
	vols      map[string]*logAgg
	// files counts the log files scanned.
	files int
}

type logAgg struct {
	ev      LogEvidence
	files   map[string]bool
	msgTime time.Time
}

func newLogScanner(ns string) *logScanner {
	return &logScanner{namespace: ns, vols: map[string]*logAgg{}}
}

// scan reads one log line by line. A read error (truncated archive entry)
// ends the file; what was read before still counts.
func (s *logScanner) scan(name string, r io.Reader) error {
	s.files++
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readBoundedLine(br, maxLogLine)
		if len(line) > 0 {
			if h, ok := parseLogLine(line); ok {
				s.add(name, h)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (s *logScanner) add(file string, h logHit) {
	if h.Volume == "" || (h.Namespace != "" && h.Namespace != s.namespace) {
		return
	}
	a := s.vols[h.Volume]
	if a == nil {
		a = &logAgg{files: map[string]bool{}}
		s.vols[h.Volume] = a
	}
	a.ev.Count++
	a.files[file] = true
	if !h.Time.IsZero() {
		if a.ev.FirstSeen.IsZero() || h.Time.Before(a.ev.FirstSeen) {
			a.ev.FirstSeen = h.Time
		}
		if h.Time.After(a.ev.LastSeen) {
			a.ev.LastSeen = h.Time
		}
	}
	// Keep the latest message; lines without a time do not displace one
	// that has a time.
	if a.ev.Message == "" || (!h.Time.IsZero() && !h.Time.Before(a.msgTime)) || (h.Time.IsZero() && a.msgTime.IsZero()) {
		a.ev.Message, a.msgTime = h.Message, h.Time
	}
}

// result returns the evidence per volume.
func (s *logScanner) result() map[string]LogEvidence {
	out := make(map[string]LogEvidence, len(s.vols))
	for vol, a := range s.vols {
		ev := a.ev
		for f := range a.files {
			ev.Files = append(ev.Files, f)
		}
		sort.Strings(ev.Files)
		out[vol] = ev
	}
	return out
}

// readBoundedLine returns the next line, cut to max bytes; the rest of an
// overlong line is skipped without being kept.
func readBoundedLine(br *bufio.Reader, max int) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	kept := append(make([]byte, 0, 2*len(line)), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = br.ReadSlice('\n')
		if room := max - len(kept); room > 0 {
			if len(line) > room {
				line = line[:room]
			}
			kept = append(kept, line...)
		}
	}
	return kept, err
}
