package acceptance

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/client"
)

// TestImportOMBCommand: `kbench import` of an OpenMessaging Benchmark
// result stores it in a real `kbench serve` as an imported e2e run of
// OMB's figures; its omb.json, imported again, is a run of the same
// figures; a malformed result exits 1 naming the field.
func TestImportOMBCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kbench and starts kbench serve")
	}
	srv := startE2EServer(t)
	sample, err := filepath.Abs("../internal/omb/testdata/kafka-1-topic-16-partitions-1kb.json")
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, sample)
	if code != 0 || !strings.HasPrefix(stdout, srv.URL+"/runs/") {
		t.Fatalf("kbench import OMB.json: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	first := getStored(t, srv, stdout)
	if first.Workload != "e2e" || first.Source != "imported" || first.Label != "Kafka" || len(first.Metrics) != 26 {
		t.Errorf("stored %+v", first)
	}

	var back client.OMBResult
	srv.api(t, http.MethodGet, "/api/runs/"+strconv.FormatUint(uint64(first.ID), 10)+"/omb.json", nil, http.StatusOK, &back)
	data, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "again.json")
	if err := os.WriteFile(again, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = kbenchCmd(t, nil, "import", "--server", srv.URL, "--omb", "--label", "again", again)
	if code != 0 {
		t.Fatalf("kbench import of omb.json: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	second := getStored(t, srv, stdout)
	for _, m := range first.Metrics {
		var got *client.Metric
		for i := range second.Metrics {
			if second.Metrics[i].Name == m.Name {
				got = &second.Metrics[i]
			}
		}
		if got == nil || got.Value != m.Value || got.Unit != m.Unit {
			t.Errorf("%s: first import %v %s, its omb.json's %+v", m.Name, m.Value, m.Unit, got)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"workload":"w","driver":"d","publishRate":[1,"2"]}`), 0o644)
	if code, _, stderr := kbenchCmd(t, nil, "import", "--server", srv.URL, bad); code != 1 || !strings.Contains(stderr, "omb[0].publishRate[1]: is a string") {
		t.Errorf("a malformed result: exit %d, stderr %s", code, stderr)
	}
}
