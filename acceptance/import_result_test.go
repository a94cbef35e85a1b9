package acceptance

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/internal/rundoc"
)

// storedRun is what these tests read of a run through the API.
type storedRun = client.Run

func getStored(t *testing.T, srv *e2eServer, url string) storedRun {
	t.Helper()
	var r storedRun
	srv.api(t, http.MethodGet, "/api"+strings.TrimPrefix(strings.TrimSpace(url), srv.URL), nil, http.StatusOK, &r)
	return r
}

// TestImportResultDirCommand: `kbench import DIR` of a `kbench run --out
// DIR` directory stores it in a real `kbench serve` as one run with its
// metrics, profiles and meta (the command's --meta over the run's), in
// the series of the server's own runs of that spec; a DIR without
// result.json is a usage error; a newer result schema is refused.
func TestImportResultDirCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	srv := startE2EServer(t)
	dir := t.TempDir()
	if code, _, stderr := kbenchCmd(t, nil, "run", "producer", "--num-records", "2000", "--profile", "cpu", "--out", dir, "--meta", "branch=trunk"); code != 0 {
		t.Fatalf("kbench run: exit %d\n%s", code, stderr)
	}
	res, err := rundoc.ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, dir, "--meta", "commit=abc123", "--label", "ci")
	if code != 0 || !strings.HasPrefix(stdout, srv.URL+"/runs/") {
		t.Fatalf("kbench import DIR: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	r := getStored(t, srv, stdout)
	if r.Workload != "producer" || r.Source != "imported" || r.Status != "succeeded" || r.Label != "ci" ||
		r.Meta["commit"] != "abc123" || r.Meta["branch"] != "trunk" || r.Meta["version"] != res.Meta["version"] ||
		len(r.Profiles) != len(res.Profiles) || len(r.Metrics) != len(res.Metrics) {
		t.Errorf("stored %+v", r)
	}
	// Its histograms came along: the window's of result.json, and the
	// intervals of the histogram log beside it.
	var hs struct {
		Histograms []struct{ Kind, Scope string } `json:"histograms"`
	}
	srv.api(t, http.MethodGet, "/api/runs/"+strconv.FormatUint(uint64(r.ID), 10)+"/histograms", nil, http.StatusOK, &hs)
	scopes := map[string]int{}
	for _, h := range hs.Histograms {
		scopes[h.Scope]++
	}
	if res.HistogramLog == "" || scopes["window"] != len(res.Histograms) || scopes["interval"] == 0 {
		t.Errorf("imported histograms by scope %v; result.json has %d and names log %q", scopes, len(res.Histograms), res.HistogramLog)
	}
	// The server's own run of the same spec and branch: the same series.
	id := srv.createRun(t, map[string]any{"workload": "producer", "meta": map[string]string{"branch": "trunk"},
		"params": map[string]any{"num-records": 2000, "profile": "none"}})
	var own storedRun
	srv.api(t, http.MethodGet, "/api/runs/"+strconv.FormatUint(uint64(id), 10), nil, http.StatusOK, &own)
	if own.SeriesKey != r.SeriesKey || own.Fingerprint != r.Fingerprint {
		t.Errorf("imported series %q, the server's run's %q", r.SeriesKey, own.SeriesKey)
	}

	empty := t.TempDir()
	if code, _, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, empty); code != 2 || !strings.Contains(stderr, "result.json") {
		t.Errorf("import of a directory without result.json: exit %d, %s", code, stderr)
	}
	if code, _, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, "--profile", "x.pb.gz", dir); code != 2 || !strings.Contains(stderr, "--profile") {
		t.Errorf("import DIR --profile: exit %d, %s", code, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "result.json"))
	newer := t.TempDir()
	os.WriteFile(filepath.Join(newer, "result.json"), bytes.Replace(data, []byte(`"schema": 1`), []byte(`"schema": 99`), 1), 0o644)
	for _, name := range append([]string{res.HistogramLog}, profileFiles(res)...) {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		os.WriteFile(filepath.Join(newer, name), b, 0o644)
	}
	if code, _, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, newer); code != 1 || !strings.Contains(stderr, "newer kbench") {
		t.Errorf("import of a newer schema: exit %d, %s", code, stderr)
	}
}

// TestRunServerCommand: `kbench run … --server URL` runs with the
// embedded broker, then stores the run in the server as kbench import
// DIR does and prints its URL last; without --out it writes to a
// temporary directory it removes, with --out the result stays; a failed
// run is stored too (failed, with its error) and exits 1; a server that
// cannot be reached exits 1 after the run, saying so, and keeps --out.
func TestRunServerCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	srv := startE2EServer(t)
	code, stdout, stderr := kbenchCmd(t, nil, "run", "producer", "--num-records", "2000", "--profile", "cpu", "--server", srv.URL, "--meta", "commit=abc123")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	last := lines[len(lines)-1]
	if code != 0 || !strings.HasPrefix(last, srv.URL+"/runs/") || !strings.Contains(stdout, "records sent") {
		t.Fatalf("kbench run --server: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	r := getStored(t, srv, last)
	if r.Status != "succeeded" || !r.Complete || r.Source != "imported" || r.Meta["commit"] != "abc123" || len(r.Profiles) == 0 || len(r.Metrics) == 0 {
		t.Errorf("stored %+v", r)
	}

	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr = kbenchCmd(t, nil, "run", "producer", "--num-records", "500", "--profile", "none", "--out", out, "--server", "http://127.0.0.1:1")
	if code != 1 || !strings.Contains(stderr, "cannot reach the kbench server at http://127.0.0.1:1") {
		t.Errorf("unreachable server: exit %d, stderr %s", code, stderr)
	}
	if _, err := rundoc.ReadResult(out); err != nil {
		t.Errorf("the local result is gone: %v", err)
	}

	code, stdout, stderr = kbenchCmd(t, nil, "run", "producer", "--num-records", "500", "--profile", "none", "--bootstrap-server", "127.0.0.1:1",
		"--server", srv.URL)
	lines = strings.Split(strings.TrimSpace(stdout), "\n")
	last = lines[len(lines)-1]
	if code != 1 || !strings.HasPrefix(last, srv.URL+"/runs/") {
		t.Fatalf("failed run --server: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if f := getStored(t, srv, last); f.Status != "failed" || f.Complete {
		t.Errorf("failed run stored as %s (complete %v)", f.Status, f.Complete)
	}
	if code, _, stderr := kbenchCmd(t, nil, "run", "producer", "--server", "ftp://x"); code != 2 || !strings.Contains(stderr, "--server") {
		t.Errorf("bad --server: exit %d, %s", code, stderr)
	}
}

// TestImportCSVCommand: `kbench import --csv` back-fills the KAFKA-14020
// history (20 runs at ~115k records/s, then 40 at ~105k) as 60 runs of one
// series, printing each URL; a bad cell is reported FILE:LINE:COLUMN and
// exits 1; --csv without --series or --workload is a usage error.
func TestImportCSVCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	srv := startE2EServer(t)
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("time,commit,record-send-rate\n")
	for i := 0; i < 60; i++ {
		rate := 115000 + (i%3-1)*1500
		if i >= 20 {
			rate = 105000 + (i%3-1)*1500
		}
		fmt.Fprintf(&b, "2022-05-%02dT%02d:00:00Z,c%03d,%d\n", 1+i/24, i%24, i, rate)
	}
	good := filepath.Join(dir, "kafka-14020.csv")
	os.WriteFile(good, []byte(b.String()), 0o644)
	code, stdout, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, "--csv", good, "--series", "kafka-14020", "--workload", "producer")
	urls := strings.Fields(stdout)
	if code != 0 || len(urls) != 60 || !strings.Contains(stderr, "60 runs stored in series kafka-14020") {
		t.Fatalf("import --csv: exit %d, %d URLs, stderr %s", code, len(urls), stderr)
	}
	first, last := getStored(t, srv, urls[0]), getStored(t, srv, urls[59])
	if first.SeriesKey != "kafka-14020" || last.SeriesKey != "kafka-14020" || first.Meta["commit"] != "c000" || last.Meta["commit"] != "c059" {
		t.Errorf("first %+v last %+v", first, last)
	}

	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("time,commit,record-send-rate\n2022-05-01T00:00:00Z,a,1\n2022-05-02T00:00:00Z,b,fast\n"), 0o644)
	code, _, stderr = kbenchCmd(t, nil, "import", "--server", srv.URL, "--csv", bad, "--series", "s", "--workload", "producer")
	if code != 1 || !strings.Contains(stderr, bad+":3:24: ") {
		t.Errorf("bad CSV: exit %d, stderr %s", code, stderr)
	}
	// The server's reader decides the times too: a zone name is refused
	// at its cell, as the API and the import page refuse it.
	zoned := filepath.Join(dir, "zoned.csv")
	os.WriteFile(zoned, []byte("commit,time,record-send-rate\na,2024-01-01 10:00:00 EST,1\n"), 0o644)
	code, _, stderr = kbenchCmd(t, nil, "import", "--server", srv.URL, "--csv", zoned, "--series", "s", "--workload", "producer")
	if code != 1 || !strings.Contains(stderr, zoned+":2:3: ") || !strings.Contains(stderr, `zone "EST"`) {
		t.Errorf("CSV with a zone name: exit %d, stderr %s", code, stderr)
	}
	for _, args := range [][]string{
		{"--csv", good, "--workload", "producer"},
		{"--csv", good, "--series", "s"},
		{"--csv", good, "--series", "s", "--workload", "producer", "--label", "x"},
		{"--workload", "producer", good},
	} {
		if code, _, stderr := kbenchCmd(t, nil, append([]string{"import", "--server", srv.URL}, args...)...); code != 2 {
			t.Errorf("import %v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// profileFiles are the names of the profiles res names.
func profileFiles(res *rundoc.Result) []string {
	var names []string
	for _, p := range res.Profiles {
		names = append(names, p.File)
	}
	return names
}
