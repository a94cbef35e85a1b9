package store

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestOutcomeRoundTrip writes each outcome twice, as a launched run ends
// (FinishRun on a queued run) and as an import is stored (Run.Record on a
// new run, then CreateRuns), and reads both back through GetRun: each
// reads back what was written, and the two read back alike.
func TestOutcomeRoundTrip(t *testing.T) { eachBackend(t, testOutcomeRoundTrip) }

func testOutcomeRoundTrip(t *testing.T) {
	finished := time.Date(2026, 2, 3, 4, 5, 6, 789012345, time.UTC)
	for _, tc := range []struct {
		name     string
		workload rundoc.Workload
		source   rundoc.Source
		o        Outcome
	}{
		{"launched, full", rundoc.Producer, rundoc.SourceLaunched, Outcome{
			Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: finished,
			Environment: &rundoc.Environment{KbenchVersion: "devel+0123456789ab", KbenchBuild: "abcdefabcdef",
				GoVersion: "go1.26.8", KafkaGoVersion: "v0.4.51", OS: "linux", Arch: "amd64", Kernel: "6.8.0",
				CPUModel: "AMD EPYC 7B13", Cores: 2, GOMAXPROCS: 2, Host: "bench-1", Broker: "embedded (kfake)",
				LoadAverage: &rundoc.LoadAverage{Load1: 0.5, Load5: 0.75, Load15: 1.25},
				Target: &rundoc.Target{Kind: rundoc.TargetEmbedded, APIVersionsFrom: "127.0.0.1:9092",
					APIVersions: []rundoc.APIVersion{{Key: 0, Name: "Produce", Min: 3, Max: 11}, {Key: 18, Name: "ApiVersions", Min: 0, Max: 4}}},
				Config: &rundoc.Config{Mode: "raw", Settings: []rundoc.Setting{{Name: "acks", Value: "all"}, {Name: "linger.ms", Value: "5"}}}},
			Measurement: &rundoc.Measurement{WarmupRecords: 1000, PrefillRecords: 50, MeasuredRecords: 20000,
				WindowSeconds: 2.5, LatencySamples: 20000, CPUSamples: 10, CPUSampleMs: 250,
				Notes: []string{"first note", "second note"}, OutputNotes: []string{"whole milliseconds"},
				HarnessLimits: []string{"cpu saturated"}},
			Output: "20000 records sent, 8000.0 records/sec (1.95 MB/sec)\n",
			Metrics: []rundoc.Metric{
				{Name: "record-send-rate", Value: 8000, Unit: "records/s", Better: rundoc.HigherIsBetter, Help: "acknowledged records per second"},
				{Name: "mb-per-sec", Value: 1.95, Unit: "MB/s", Better: rundoc.HigherIsBetter},
				{Name: "record-latency-p99", Value: 8.5, Unit: "ms", Better: rundoc.LowerIsBetter},
				{Name: "num-records", Value: 20000, Unit: "records", Better: rundoc.Neither},
			},
			Series: []rundoc.SeriesPoint{
				{T: 0.25, Records: 2000, Bytes: 512000, RecordsPerSec: 8000, MBPerSec: 1.95, LatencyAvgMs: 3, LatencyMaxMs: 9, CPUPercent: 80},
				{T: 0.5, Records: 1900, Bytes: 486400, RecordsPerSec: 7600, MBPerSec: 1.85, LatencyAvgMs: 3.25, LatencyMaxMs: 8, CPUPercent: 75},
				{T: 0.75, Records: 2100, Bytes: 537600, RecordsPerSec: 8400, MBPerSec: 2.05},
			},
			Profiles: []Profile{{Role: rundoc.RoleClient, Kind: rundoc.KindCPU, Data: []byte("cpu"), Samples: 4}},
		}},
		{"imported", rundoc.Producer, rundoc.SourceImported, Outcome{
			Status: rundoc.StatusSucceeded, Complete: true, FinishedAt: finished,
			Environment: &rundoc.Environment{Source: rundoc.SourceImported, Tool: "kafka-producer-perf-test", Broker: "unknown: imported"},
			Measurement: &rundoc.Measurement{Source: rundoc.SourceImported, Tool: "kafka-producer-perf-test", Lines: 3, MeasuredRecords: 1000},
			Output:      "1000 records sent, 500.0 records/sec\n",
			Metrics:     []rundoc.Metric{{Name: "records-per-sec", Value: 500, Unit: "records/s", Better: rundoc.HigherIsBetter}},
			Series:      []rundoc.SeriesPoint{{T: 2, Records: 1000, RecordsPerSec: 500}, {T: 5, Records: 1500, RecordsPerSec: 500, MBPerSec: 0.5}},
			Profiles:    []Profile{{Role: rundoc.RoleBroker, Kind: rundoc.KindOther, Data: []byte("wall"), Uploaded: true}},
		}},
		{"failed, no documents", rundoc.Consumer, rundoc.SourceLaunched, Outcome{
			Status: rundoc.StatusFailed, Error: "cannot reach broker 127.0.0.1:1", FinishedAt: finished,
		}},
		{"environment only", rundoc.Writepath, rundoc.SourceLaunched, Outcome{
			Status: rundoc.StatusInterrupted, Error: "killed", FinishedAt: finished,
			Environment: &rundoc.Environment{GoVersion: "go1.26.8", Cores: 2},
		}},
		{"empty documents", rundoc.Producer, rundoc.SourceLaunched, Outcome{
			Status: rundoc.StatusCanceled, FinishedAt: finished,
			Environment: &rundoc.Environment{}, Measurement: &rundoc.Measurement{},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			ctx := context.Background()

			launched := &Run{Label: "x", Workload: tc.workload, Source: tc.source}
			create(t, s, launched)
			if err := s.FinishRun(ctx, launched.ID, tc.o); err != nil {
				t.Fatalf("FinishRun: %v", err)
			}
			recorded := &Run{Label: "x", Workload: tc.workload, Source: tc.source}
			if err := recorded.Record(tc.o); err != nil {
				t.Fatalf("Record: %v", err)
			}
			create(t, s, recorded)

			a, b := get(t, s, launched.ID), get(t, s, recorded.ID)
			for _, got := range []*rundoc.Run{a, b} {
				checkOutcome(t, s, got, tc.o)
			}
			// Alike but for what tells two runs apart.
			b.ID, b.CreatedAt, b.Time = a.ID, a.CreatedAt, a.Time
			for _, r := range []*rundoc.Run{a, b} {
				for i := range r.Profiles {
					r.Profiles[i].ID, r.Profiles[i].RunID, r.Profiles[i].CreatedAt = 0, 0, time.Time{}
				}
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("FinishRun and Record+CreateRuns read back differently:\nFinishRun: %+v\nRecord:    %+v", a, b)
			}
		})
	}
}

// checkOutcome asserts that a stored run reads back as the outcome
// written to it.
func checkOutcome(t *testing.T, s *Store, got *rundoc.Run, o Outcome) {
	t.Helper()
	wantDocs := rundoc.Documents{}
	if o.Environment != nil {
		wantDocs.Environment = docText(t, o.Environment)
	}
	if o.Measurement != nil {
		wantDocs.Measurement = docText(t, o.Measurement)
	}
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"Status", got.Status, o.Status},
		{"Error", got.Error, o.Error},
		{"Complete", got.Complete, o.Complete},
		{"Output", got.Output, o.Output},
		// Times are kept as the backend keeps them (storedTime).
		{"FinishedAt", got.FinishedAt != nil && got.FinishedAt.Equal(s.stored(o.FinishedAt)), true},
		{"Environment", got.Environment, o.Environment},
		{"Measurement", got.Measurement, o.Measurement},
		{"Documents", got.Documents, wantDocs},
		{"DocumentErr", got.DocumentErr, nil},
		{"Metrics", got.Metrics, o.Metrics},
		{"Series", got.Series, o.Series},
		{"profiles", len(got.Profiles), len(o.Profiles)},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("run %d: %s: got %+v, want %+v", got.ID, c.field, c.got, c.want)
		}
	}
	if o.Environment != nil && got.Environment == o.Environment {
		t.Errorf("run %d: Environment is the caller's pointer, want a decoded copy", got.ID)
	}
	for i := range min(len(got.Profiles), len(o.Profiles)) {
		p, w := got.Profiles[i], o.Profiles[i]
		if p.Role != w.Role || p.Kind != w.Kind || p.Samples != w.Samples || p.Uploaded != w.Uploaded ||
			p.Bytes != int64(len(w.Data)) || p.SHA256 != sum256(w.Data) {
			t.Errorf("run %d: profile %d: got %+v, want %s/%s of %d bytes", got.ID, i, p, w.Role, w.Kind, len(w.Data))
		}
		if d := profileData(t, s, p.ID); string(d) != string(w.Data) {
			t.Errorf("run %d: profile %d: data %q, want %q", got.ID, i, d, w.Data)
		}
	}
}

// TestOutcomeUnknownDirection: a metric whose direction is none of
// rundoc's is refused by both ways of storing an outcome, and nothing is
// stored.
func TestOutcomeUnknownDirection(t *testing.T) { eachBackend(t, testOutcomeUnknownDirection) }

func testOutcomeUnknownDirection(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	o := Outcome{Status: rundoc.StatusSucceeded, Metrics: []rundoc.Metric{{Name: "x", Value: 1, Better: "sideways"}}}
	r := &Run{}
	create(t, s, r)
	before := get(t, s, r.ID)
	if err := s.FinishRun(ctx, r.ID, o); err == nil || !strings.Contains(err.Error(), "sideways") {
		t.Errorf("FinishRun: got %v, want an error naming the direction", err)
	}
	checkUntouched(t, s, before)
	var rec Run
	if err := rec.Record(o); err == nil || !strings.Contains(err.Error(), "sideways") {
		t.Errorf("Record: got %v, want an error naming the direction", err)
	}
}

// TestOutcomeOneMetricOfAName: a run holds one metric of a name, the
// first given, whichever way it is stored.
func TestOutcomeOneMetricOfAName(t *testing.T) { eachBackend(t, testOutcomeOneMetricOfAName) }

func testOutcomeOneMetricOfAName(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	o := Outcome{Status: rundoc.StatusSucceeded, Metrics: []rundoc.Metric{
		{Name: "x", Value: 1, Unit: "ms"}, {Name: "y", Value: 2}, {Name: "x", Value: 3, Unit: "s"}}}
	launched := &Run{}
	create(t, s, launched)
	if err := s.FinishRun(ctx, launched.ID, o); err != nil {
		t.Fatal(err)
	}
	imported := &Run{Source: rundoc.SourceImported}
	if err := imported.Record(o); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateRuns(ctx, []*Run{imported}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint{launched.ID, imported.ID} {
		r := get(t, s, id)
		var got []string
		for _, m := range r.Metrics {
			got = append(got, fmt.Sprintf("%s=%g%s", m.Name, m.Value, m.Unit))
		}
		if !slices.Equal(got, []string{"x=1ms", "y=2"}) {
			t.Errorf("run %d metrics %v, want x=1ms y=2", id, got)
		}
	}
}

// TestUndecodableDocument: a stored document this code cannot decode
// (written by another kbench, or damaged) does not make its run
// unreadable: GetRun returns the run with DocumentErr naming the
// document, that document nil, the other one decoded, and Documents
// holding both texts as stored.
func TestUndecodableDocument(t *testing.T) { eachBackend(t, testUndecodableDocument) }

func testUndecodableDocument(t *testing.T) {
	goodEnv := docText(t, rundoc.Environment{GoVersion: "go1.26.8", Cores: 2})
	goodMeas := docText(t, rundoc.Measurement{MeasuredRecords: 10, WindowSeconds: 1})
	for _, tc := range []struct {
		name      string
		env, meas string
		raw       bool   // written by an UPDATE of the row rather than CreateRuns
		wantErr   string // "" for none
	}{
		{"measurement not JSON", goodEnv, "not json", false, "measurement"},
		{"measurement of another shape", goodEnv, `{"measured_records":"many"}`, false, "measurement"},
		{"measurement a list", goodEnv, `[1,2]`, true, "measurement"},
		{"environment of another shape", `{"cores":"two"}`, goodMeas, false, "environment"},
		{"environment cut short", goodEnv[:len(goodEnv)/2], goodMeas, true, "environment"},
		{"both", "{", "}", false, "environment"},
		// A newer kbench's added field is no error: it is left out of
		// the decoded document, and Documents keeps it.
		{"unknown field", goodEnv, `{"measured_records":10,"window_seconds":1,"added_later":true}`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			r := &Run{Status: rundoc.StatusSucceeded, Label: "docs", Metrics: []Metric{{Name: "x", Value: 1}}}
			if !tc.raw {
				r.Environment, r.Measurement = tc.env, tc.meas
			}
			create(t, s, r)
			if tc.raw {
				if err := s.db.Exec("UPDATE runs SET environment = ?, measurement = ? WHERE id = ?", tc.env, tc.meas, r.ID).Error; err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.GetRun(context.Background(), r.ID)
			if err != nil {
				t.Fatalf("GetRun: %v, want the run", err)
			}
			if want := (rundoc.Documents{Environment: tc.env, Measurement: tc.meas}); got.Documents != want {
				t.Errorf("Documents: got %+v, want the stored text %+v", got.Documents, want)
			}
			if got.Label != "docs" || got.Status != rundoc.StatusSucceeded || len(got.Metrics) != 1 {
				t.Errorf("run: got %+v, want the rest of it read", got)
			}
			envBad := tc.wantErr == "environment" || tc.name == "both"
			measBad := tc.wantErr == "measurement" || tc.name == "both"
			if envBad != (got.Environment == nil) {
				t.Errorf("Environment: got %+v, want nil only if it cannot be decoded", got.Environment)
			}
			if measBad != (got.Measurement == nil) {
				t.Errorf("Measurement: got %+v, want nil only if it cannot be decoded", got.Measurement)
			}
			if !envBad && !reflect.DeepEqual(got.Environment, &rundoc.Environment{GoVersion: "go1.26.8", Cores: 2}) {
				t.Errorf("Environment: got %+v, want the stored one decoded", got.Environment)
			}
			if !measBad && !reflect.DeepEqual(got.Measurement, &rundoc.Measurement{MeasuredRecords: 10, WindowSeconds: 1}) {
				t.Errorf("Measurement: got %+v, want the stored one decoded", got.Measurement)
			}
			switch {
			case tc.wantErr == "" && got.DocumentErr != nil:
				t.Errorf("DocumentErr: got %v, want none", got.DocumentErr)
			case tc.wantErr != "" && (got.DocumentErr == nil || !strings.Contains(got.DocumentErr.Error(), tc.wantErr)):
				t.Errorf("DocumentErr: got %v, want an error naming the %s", got.DocumentErr, tc.wantErr)
			}
			// Lists do not read documents, so the run lists as any other.
			list, _, err := s.ListRuns(context.Background(), RunFilter{})
			if err != nil || len(list) != 1 || list[0].ID != r.ID || list[0].DocumentErr != nil {
				t.Errorf("ListRuns: got %+v, %v, want the run without a document error", list, err)
			}
		})
	}
}
