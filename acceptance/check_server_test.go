package acceptance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckAgainstServer is the KAFKA-14020 story with a real kbench
// serve: a series back-filled with 20 runs at about 115k records/s, then
// one new run. `kbench check` reads the history through the real API and
// exits 1 for a new run at 105k (Otava's test flags a single run at
// −8.7%) and 0 for a new run at 115k.
func TestCheckAgainstServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	srv := startE2EServer(t)
	dir := t.TempDir()
	// history writes series's 20 runs at about 115k (±1.3%), then the
	// candidate at rate, and returns the candidate's run URL.
	history := func(series string, rate int) string {
		t.Helper()
		var b strings.Builder
		b.WriteString("time,commit,record-send-rate\n")
		for i := 0; i < 20; i++ {
			fmt.Fprintf(&b, "2022-06-%02dT10:00:00Z,c%03d,%d\n", 1+i, i, 115000+(i%3-1)*1500)
		}
		file := filepath.Join(dir, series+".csv")
		os.WriteFile(file, []byte(b.String()), 0o644)
		if code, _, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, "--csv", file, "--series", series, "--workload", "producer"); code != 0 {
			t.Fatalf("back-fill %s: exit %d: %s", series, code, stderr)
		}
		candidate := filepath.Join(dir, series+"-new.csv")
		os.WriteFile(candidate, []byte(fmt.Sprintf("time,commit,record-send-rate\n2022-06-25T10:00:00Z,new,%d\n", rate)), 0o644)
		code, stdout, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, "--csv", candidate, "--series", series, "--workload", "producer")
		if code != 0 {
			t.Fatalf("candidate of %s: exit %d: %s", series, code, stderr)
		}
		return strings.TrimSpace(stdout)
	}
	runID := func(url string) string { return url[strings.LastIndex(url, "/")+1:] }

	slower := history("k14020-slower", 105000)
	code, stdout, stderr := kbenchCmd(t, nil, "check", "--server", srv.URL, "--run", runID(slower), "--min-segment", "1")
	if code != 1 || !strings.Contains(stdout, "record-send-rate") || !strings.Contains(stdout, "regression") {
		t.Errorf("check of a run at 105k after 20 at 115k: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	same := history("k14020-same", 115000)
	if code, stdout, stderr := kbenchCmd(t, nil, "check", "--server", srv.URL, "--run", runID(same)); code != 0 {
		t.Errorf("check of a run at 115k after 20 at 115k: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := kbenchCmd(t, nil, "check", "--server", srv.URL, "--run", "99999"); code != 3 {
		t.Errorf("check of a run that does not exist: exit %d, want 3 (%s)", code, stderr)
	}
}
