package readstate

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/internal/testenv"
)

var (
	logT1 = time.Date(2023, 9, 1, 10, 0, 0, 0, time.UTC)
	logT2 = logT1.Add(90 * time.Minute)
)

func TestParseLogLine(t *testing.T) {
	bug := "BUG: found the second active engine pvc-1-e-5f3a9c21 besides pvc-1-e-0b4d7e88"
	tests := []struct {
		name string
		line string
		want logHit
	}{
		{
			"v1.4.3 with kubelet timestamp",
			testenv.BugLine(testenv.Style143, logT1, "longhorn-system", "pvc-1", "pvc-1-e-5f3a9c21", "pvc-1-e-0b4d7e88", "node-b"),
			logHit{Namespace: "longhorn-system", Volume: "pvc-1", Time: logT1, Message: bug},
		},
		{
			"v1.5.1",
			testenv.BugLine(testenv.Style151, logT1, "longhorn-system", "pvc-1", "pvc-1-e-5f3a9c21", "pvc-1-e-0b4d7e88", "node-b"),
			logHit{Namespace: "longhorn-system", Volume: "pvc-1", Time: logT1, Message: bug},
		},
		{
			"v1.5.2 Volume field (transient window on fixed releases)",
			testenv.BugLine(testenv.Style152, logT1, "lh", "pvc-1", "pvc-1-e-1", "pvc-1-e-0", "node-b"),
			logHit{Namespace: "lh", Volume: "pvc-1", Time: logT1, Message: "BUG: found the second active engine pvc-1-e-1 besides pvc-1-e-0"},
		},
		{
			"logrus time only",
			testenv.ManagerLine(testenv.Style143, logT2, "longhorn-system", "pvc-2", "node-a", "failed to sync longhorn-system/pvc-2: "+bug),
			logHit{Namespace: "longhorn-system", Volume: "pvc-2", Time: logT2, Message: bug},
		},
		{
			"new active engine, volume from the engine names",
			`level=error msg="x" error="BUG: found the second new active engine vol-a-e-1 besides vol-a-e-0"`,
			logHit{Volume: "vol-a", Message: "BUG: found the second new active engine vol-a-e-1 besides vol-a-e-0"},
		},
		{
			"cannot find the current engine",
			`time="2023-09-01T11:30:00Z" level=warning msg="Error syncing" error="cannot find the current engine for the switching after iterating and cleaning up all engines for volume pvc-3, all engines may be detached or in a transient state"`,
			logHit{Volume: "pvc-3", Time: logT1.Add(90 * time.Minute), Message: "cannot find the current engine for the switching after iterating and cleaning up all engines for volume pvc-3, all engines may be detached or in a transient state"},
		},
		{
			"JSON log format",
			`{"error":"failed to sync ns1/pvc-4: BUG: found the second active engine pvc-4-e-1 besides pvc-4-e-0","level":"error","msg":"Failed to sync","time":"2023-09-01T10:00:00Z"}`,
			logHit{Namespace: "ns1", Volume: "pvc-4", Time: logT1, Message: "BUG: found the second active engine pvc-4-e-1 besides pvc-4-e-0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseLogLine([]byte(tt.line))
			if !ok {
				t.Fatalf("line not recognised: %s", tt.line)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	for _, line := range []string{
		"",
		testenv.InfoLine(logT1, 1),
		`level=info msg="Volume migration engine is ready" volume=pvc-1`,
		`level=warning msg="failed to directly pick up the current one from multiple engines for volume pvc-1, fall back to detect the new current engine"`,
	} {
		if h, ok := parseLogLine([]byte(line)); ok {
			t.Errorf("unrelated line matched: %q -> %+v", line, h)
		}
	}
}

func TestLogScannerAggregates(t *testing.T) {
	ns := "longhorn-system"
	s := newLogScanner(ns)
	logA := strings.Join([]string{
		testenv.InfoLine(logT1.Add(-time.Minute), 1),
		testenv.BugLine(testenv.Style143, logT1.Add(10*time.Minute), ns, "pvc-1", "pvc-1-e-b", "pvc-1-e-a", "node-b"),
		testenv.BugLine(testenv.Style143, logT1, ns, "pvc-1", "pvc-1-e-b", "pvc-1-e-a", "node-b"),
		testenv.BugLine(testenv.Style143, logT1, "other-ns", "pvc-1", "pvc-1-e-b", "pvc-1-e-a", "node-b"),
		testenv.InfoLine(logT1, 2),
	}, "\n") + "\n"
	logB := testenv.BugLine(testenv.Style143, logT2, ns, "pvc-1", "pvc-1-e-c", "pvc-1-e-a", "node-b") + "\n" +
		testenv.BugLine(testenv.Style143, logT1, ns, "pvc-2", "pvc-2-e-b", "pvc-2-e-a", "node-a") // no final newline
	if err := s.scan("logs/a.log", strings.NewReader(logA)); err != nil {
		t.Fatal(err)
	}
	if err := s.scan("logs/b.log.1", strings.NewReader(logB)); err != nil {
		t.Fatal(err)
	}
	got := s.result()
	want := map[string]LogEvidence{
		"pvc-1": {Count: 3, FirstSeen: logT1, LastSeen: logT2,
			Message: "BUG: found the second active engine pvc-1-e-c besides pvc-1-e-a", Files: []string{"logs/a.log", "logs/b.log.1"}},
		"pvc-2": {Count: 1, FirstSeen: logT1, LastSeen: logT1,
			Message: "BUG: found the second active engine pvc-2-e-b besides pvc-2-e-a", Files: []string{"logs/b.log.1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("result:\n got %+v\nwant %+v", got, want)
	}
	if s.files != 2 {
		t.Errorf("files = %d", s.files)
	}
}

// The latest message wins even when lines come out of order, and a line
// without a time does not displace one with a time.
func TestLogScannerMessageChoice(t *testing.T) {
	s := newLogScanner("ns")
	s.add("f", logHit{Volume: "v", Time: logT2, Message: "late"})
	s.add("f", logHit{Volume: "v", Time: logT1, Message: "early"})
	s.add("f", logHit{Volume: "v", Message: "undated"})
	s.add("f", logHit{Volume: "", Message: "no volume"})
	ev := s.result()["v"]
	if ev.Message != "late" || ev.Count != 3 || !ev.FirstSeen.Equal(logT1) || !ev.LastSeen.Equal(logT2) {
		t.Errorf("evidence = %+v", ev)
	}
	if len(s.result()) != 1 {
		t.Errorf("a line naming no volume was kept: %v", s.result())
	}
}

// An overlong line costs bounded memory and does not hide the next line.
func TestLogScannerLongLines(t *testing.T) {
	s := newLogScanner("longhorn-system")
	long := strings.Repeat("x", 3*maxLogLine)
	in := long + "\n" + testenv.BugLine(testenv.Style151, logT1, "longhorn-system", "pvc-9", "pvc-9-e-1", "pvc-9-e-0", "n") + "\n"
	if err := s.scan("f", strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if s.result()["pvc-9"].Count != 1 {
		t.Errorf("line after a long line missed: %+v", s.result())
	}
	br := bufio.NewReaderSize(strings.NewReader(long+"\nnext\n"), 16)
	line, err := readBoundedLine(br, 100)
	if err != nil || len(line) != 100 {
		t.Errorf("bounded line: %d bytes, err %v", len(line), err)
	}
	line, _ = readBoundedLine(br, 100)
	if string(line) != "next\n" {
		t.Errorf("after a long line: %q", line)
	}
}

// A read error ends the file but keeps what was scanned.
func TestLogScannerReadError(t *testing.T) {
	s := newLogScanner("longhorn-system")
	boom := errors.New("unexpected EOF in zip entry")
	r := io.MultiReader(strings.NewReader(testenv.BugLine(testenv.Style143, logT1, "longhorn-system", "pvc-1", "pvc-1-e-1", "pvc-1-e-0", "n")+"\n"), iotest.ErrReader(boom))
	if err := s.scan("f", r); !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if s.result()["pvc-1"].Count != 1 {
		t.Errorf("lines before the error lost: %+v", s.result())
	}
}
