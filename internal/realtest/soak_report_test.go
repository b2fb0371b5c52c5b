package realtest

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/longhorn-engines/kubectl-longhorn-engines/pkg/longhorn"
)

// soakHeader is the report table's header; every row has its columns.
const soakHeader = "| release | migrations (confirmed / rolled back) | detaches | node reboots | faults injected (hits) | seed faults hit | two active seen | stuck (BUG logged) | repaired by the guard | DanglingReplicas (repaired by the guard) | stuck for (median / p95 / max) | to verified repair (median / p95 / max) | wiped dirs in use | active replicas deleted | data lost | guard writes to volumes not stuck | guard writes not backed up first (backup ConfigMaps) | not converged | guard peak RSS | guard CPU | wall |"

var soakColumns = strings.Count(soakHeader, "|") - 1

// soakReport renders docs/soak.md from the releases' results: what make
// soak wrote, with the command that made it.
func soakReport(cfg soakConfig, command string) string {
	soakMu.Lock()
	rows := append([]soakResult(nil), soakResults...)
	soakMu.Unlock()
	sort.Slice(rows, func(i, j int) bool {
		a, _ := longhorn.ParseVersion(rows[i].Release)
		b, _ := longhorn.ParseVersion(rows[j].Release)
		return !a.AtLeast(b.Major, b.Minor, b.Patch)
	})
	if command == "" {
		command = "make soak"
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# The soak: live migrations under faults, with the guard running\n\n")
	p("<!-- Written by internal/realtest TestSoak (make soak); do not edit by hand. -->\n\n")
	p("Made by `%s` on %s: %d migrations per release on %d volumes, seed %d, the guard's `--settle %s`.\n\n",
		command, time.Now().UTC().Format("2006-01-02"), cfg.Migrations, cfg.Volumes, cfg.Seed, cfg.Settle)
	p("Each release runs its own Longhorn controllers (internal/lhreal) with the simulator playing the instance\n")
	p("managers. Volumes live-migrate between node-a and node-b as node drains move them during an upgrade\n")
	p("(1.4: `spec.migrationNodeID`; 1.5+: csi-attacher tickets); about one in five migrations rolls back and is\n")
	p("retried, one volume in ten is detached and attached again instead, and a drained node is taken down and\n")
	p("brought back. Before every drain up to two faults of random kinds are injected into the requests of\n")
	p("Longhorn's own controllers, and three confirms in ten get the seed's fault (the volume controller's delete\n")
	p("of the old engine fails once), which leaves two active engines on an affected release. The guard runs the\n")
	p("whole time as a separate process, as deploy/guard-job.yaml runs it: as the ServiceAccount of\n")
	p("deploy/rbac-guard.yaml (applied with kubectl) on Kubernetes' own kube-apiserver, with the Job's arguments\n")
	p("(backups to ConfigMaps too) except: the backup folder a temporary one, metrics on a loopback port,\n")
	p("`--settle` as above. The faults include the client's own timeout after a write landed (no answer at\n")
	p("all) on volume and engine updates and on engine deletes: on 1.4.x a confirm's delete answered so leaves\n")
	p("DanglingReplicas (TestConfirmDeleteTimeout), which the guard repairs: a span in which an active replica\n")
	p("names an engine that is gone, counted when Longhorn logged \"no healthy or scheduled replica for\n")
	p("starting\" for the volume during it.\n")
	p("See docs/testing.md for what the simulator plays and what it does not.\n\n")
	p("Checked after every drain and at the end: no replica deleted while active, no data directory a replica\n")
	p("uses wiped, no data lost; at the end: every stuck state (two active engines, and Longhorn's controller\n")
	p("logged the BUG error) ended by the guard within `--settle` + one sync (%v) and its repair verified (or\n", soakSyncBound)
	p("superseded: the volume moved on to its next migration before the verification could end),\n")
	p("every DanglingReplicas state ended and repaired the same way,\n")
	p("every guard write made while its volume was stuck (on a fixed release: no write at all) and backed up to\n")
	p("a ConfigMap of its volume before it, every volume converged. \"Stuck for\" runs from the state's start to\n")
	p("the guard's write that ends it; \"to verified repair\" adds the wait for Longhorn's clean-up and the\n")
	p("guard's verification.\n\n")

	p("%s\n", soakHeader)
	p("|%s\n", strings.Repeat("---|", soakColumns))
	for _, r := range rows {
		if r.Stopped {
			// zeros would read as a run that drove nothing and broke nothing
			p("| %s | stopped on a failure, not counted (see \"Invariants broken\") |%s\n", r.Release, strings.Repeat(" - |", soakColumns-2))
			continue
		}
		total := 0
		for _, n := range r.Faults {
			total += n
		}
		p("| %s | %d (%d / %d) | %d | %d | %d | %d | %d | %d | %s | %d (%d) | %s | %s | %d | %d | %d | %d | %d (%d) | %d | %.0f MiB | %v | %v |\n",
			r.Release, r.Migrations, r.Confirmed, r.RolledBack, r.Detaches, r.Flaps, total, r.SeedFaults, r.TwoActive, r.Stuck,
			repairedCell(r), r.Dangling, r.DanglingRepaired, percentiles(r.StuckTimes), percentiles(r.RepairTimes), r.Wiped, r.ActiveDeleted, r.DataLost, r.GuardWritesNotStuck, r.WritesNotBackedUp, r.BackupConfigMaps, len(r.NotConverged),
			float64(r.GuardPeakRSSKiB)/1024, r.GuardCPU.Round(time.Second), r.Wall.Round(time.Second))
	}
	p("\n## Faults injected, by kind\n\n")
	for _, r := range rows {
		p("- **%s:** ", r.Release)
		var kinds []string
		for k := range r.Faults {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		if len(kinds) == 0 {
			p("none hit")
		}
		for i, k := range kinds {
			if i > 0 {
				p("; ")
			}
			p("%s × %d", k, r.Faults[k])
		}
		p("\n")
	}
	p("\n## Invariants broken\n\n")
	broken := false
	for _, r := range rows {
		for _, v := range r.Violations {
			broken = true
			p("- %s: %s\n", r.Release, v)
		}
	}
	if !broken {
		p("None.\n")
	}
	return b.String()
}

// percentiles renders median / p95 / max, or "-" for none.
func percentiles(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	at := func(q float64) time.Duration {
		i := int(q*float64(len(s))+0.5) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(s) {
			i = len(s) - 1
		}
		return s[i].Round(100 * time.Millisecond)
	}
	return fmt.Sprintf("%v / %v / %v", at(0.5), at(0.95), s[len(s)-1].Round(100*time.Millisecond))
}

// repairedCell is the stuck states the guard repaired, with those whose
// verification a next migration superseded.
func repairedCell(r soakResult) string {
	if r.Superseded == 0 {
		return fmt.Sprint(r.Repaired)
	}
	return fmt.Sprintf("%d (%d superseded)", r.Repaired, r.Superseded)
}

// TestSoakReportStoppedRun: a release whose run stopped on a failure gets a
// row that says so, with as many cells as the header, and no counts.
func TestSoakReportStoppedRun(t *testing.T) {
	soakMu.Lock()
	saved := soakResults
	soakResults = []soakResult{
		{Release: "v1.4.3", Stopped: true, Faults: map[string]int{}, Violations: []string{"the run stopped on a failure (see the test's log)"}},
		{Release: "v1.5.3", Migrations: 10, Confirmed: 8, RolledBack: 2, Faults: map[string]int{"update volumes 409": 1}},
	}
	soakMu.Unlock()
	defer func() { soakMu.Lock(); soakResults = saved; soakMu.Unlock() }()
	report := soakReport(soakConfig{Migrations: 10, Volumes: 2, Seed: 1, Settle: time.Second}, "make soak")
	var header, stopped, done string
	for _, l := range strings.Split(report, "\n") {
		switch {
		case strings.HasPrefix(l, "| release |"):
			header = l
		case strings.HasPrefix(l, "| v1.4.3 |"):
			stopped = l
		case strings.HasPrefix(l, "| v1.5.3 |"):
			done = l
		}
	}
	if !strings.Contains(stopped, "stopped on a failure") || strings.Contains(stopped, "| 0 ") {
		t.Errorf("the stopped run's row: %q", stopped)
	}
	for _, row := range []string{stopped, done} {
		if got, want := strings.Count(row, "|"), strings.Count(header, "|"); got != want {
			t.Errorf("row has %d cell borders, the header %d: %q", got, want, row)
		}
	}
	if !strings.Contains(report, "- v1.4.3: the run stopped on a failure") {
		t.Error("the stopped run is not under \"Invariants broken\"")
	}
}
