package rundoc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWriteResultSchema: result.json says which version of the document it
// is ("schema": ResultSchema), hides the spec's secrets, and reads back as
// written.
func TestWriteResultSchema(t *testing.T) {
	dir := t.TempDir()
	spec := DefaultSpec(Producer)
	spec.Props = map[string]string{"acks": "1", "sasl.password": "hunter2"}
	r := &Result{
		Workload: Producer, Complete: true, Spec: spec,
		StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), FinishedAt: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Metrics:  []Metric{{Name: "records-per-sec", Value: 1234.5, Unit: "records/s", Better: HigherIsBetter}},
		Series:   []SeriesPoint{{T: 0.25, Records: 10, RecordsPerSec: 40}},
		Profiles: []ProfileFile{{Role: RoleClient, Kind: KindCPU, File: "client-cpu.pb.gz"}},
	}
	if err := WriteResult(dir, r); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	if got := string(raw["schema"]); got != "1" || ResultSchema != 1 {
		t.Errorf(`"schema" = %q, want 1 (ResultSchema %d)`, got, ResultSchema)
	}
	if strings.Contains(string(data), "hunter2") {
		t.Errorf("result.json holds the password:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, ".result.json.tmp")); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left behind: %v", err)
	}
	got, err := ReadResult(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Schema != ResultSchema || got.Workload != Producer || !got.Complete || got.Spec.Props["sasl.password"] != Redacted ||
		!reflect.DeepEqual(got.Metrics, r.Metrics) || !reflect.DeepEqual(got.Series, r.Series) || !reflect.DeepEqual(got.Profiles, r.Profiles) ||
		!got.StartedAt.Equal(r.StartedAt) {
		t.Errorf("read back %+v\nwrote %+v", got, r)
	}
	if m, ok := got.Metric("records-per-sec"); !ok || m.Value != 1234.5 || m.Better != HigherIsBetter {
		t.Errorf("Metric(records-per-sec) = %+v, %v", m, ok)
	}
	if _, ok := got.Metric("nope"); ok {
		t.Error("Metric found a metric the result does not have")
	}
}

// TestReadResultSchema: a document from before versions (no "schema")
// reads as it always did; one of the current version reads; one newer
// than this code knows is refused, the error naming both versions.
func TestReadResultSchema(t *testing.T) {
	write := func(t *testing.T, doc string) string {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "result.json"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const body = `"workload":"consumer","complete":true,"spec":{"workload":"consumer","topic":"t"},` +
		`"metrics":[{"name":"records-consumed-total","value":42,"unit":"records","better":"higher"}],` +
		`"profiles":[{"role":"broker","kind":"heap","file":"broker-heap.pb.gz"}]`
	for _, tc := range []struct {
		name   string
		schema string
		want   int
	}{
		{"no schema", "", 0},
		{"schema 1", `"schema":1,`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadResult(write(t, "{"+tc.schema+body+"}"))
			if err != nil {
				t.Fatalf("ReadResult: %v", err)
			}
			if r.Schema != tc.want || r.Workload != Consumer || !r.Complete || r.Spec.Topic != "t" ||
				len(r.Metrics) != 1 || r.Metrics[0].Value != 42 || r.Metrics[0].Better != HigherIsBetter ||
				len(r.Profiles) != 1 || r.Profiles[0].Role != RoleBroker || r.Profiles[0].Kind != KindHeap {
				t.Errorf("read %+v", r)
			}
		})
	}
	newer := ResultSchema + 1
	dir := write(t, `{"schema":`+strconv.Itoa(newer)+`,`+body+`}`)
	r, err := ReadResult(dir)
	if err == nil {
		t.Fatalf("schema %d read as %+v, want refused", newer, r)
	}
	if r != nil {
		t.Errorf("a result came with the error: %+v", r)
	}
	// The numbers, apart from the digits of the directory's name.
	numbers := regexp.MustCompile(`\d+`).FindAllString(strings.ReplaceAll(err.Error(), dir, ""), -1)
	for _, n := range []int{newer, ResultSchema} {
		if !slices.Contains(numbers, strconv.Itoa(n)) {
			t.Errorf("error %q does not name schema %d", err, n)
		}
	}
	if _, err := ReadResult(t.TempDir()); err == nil {
		t.Error("ReadResult of a directory without result.json succeeded")
	}
	if _, err := ReadResult(write(t, `{"schema":`)); err == nil {
		t.Error("ReadResult of a truncated document succeeded")
	}
}
