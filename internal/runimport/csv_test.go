package runimport

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/runner"
)

// kafka14020CSV is the KAFKA-14020 story as a CSV
// (testdata/kafka14020.csv): 20 runs at about 115k records/s, then 40 at
// about 105k, a day apart, each with its commit.
func kafka14020CSV(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "kafka14020.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParseCSVTime: the times a CSV row may give, and the zone names and
// out-of-range times it refuses.
func TestParseCSVTime(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{"2024-01-01T10:00:00Z", time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC), ""},
		{"2024-01-01 10:00:00 -0500", time.Date(2024, 1, 1, 15, 0, 0, 0, time.UTC), ""},
		{"2024-01-01 10:00:00", time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC), ""},
		{"2024-01-01 10:00:00 UTC", time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC), ""},
		{"2024-01-01 10:00:00 gmt", time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC), ""},
		// Go's time.String: the offset decides, the name is redundant.
		{"2024-01-01 10:00:00.5 -0500 EST", time.Date(2024, 1, 1, 15, 0, 0, 5e8, time.UTC), ""},
		{"2024.01.01 3:00:00 +0100", time.Date(2024, 1, 1, 2, 0, 0, 0, time.UTC), ""},
		{"1704250800", time.Unix(1704250800, 0).UTC(), ""},
		{"0", time.Unix(0, 0).UTC(), ""},
		{"2100-12-31T23:59:59Z", time.Date(2100, 12, 31, 23, 59, 59, 0, time.UTC), ""},
		{"2024-01-01 10:00:00 EST", time.Time{}, `zone "EST" is a name`},
		{"2024-01-01 10:00:00 XYZ", time.Time{}, `zone "XYZ" is a name`},
		{"2024-01-01T10:00:00 CEST", time.Time{}, `zone "CEST" is a name`},
		{"2024-01-01 10:00:00 Europe/Paris", time.Time{}, `zone "Europe/Paris" is a name`},
		{"999999999999", time.Time{}, "from 1970 to 2100"},
		{"1704250800000", time.Time{}, "not milliseconds"},
		{"9999-12-31T23:59:59-14:00", time.Time{}, "from 1970 to 2100"},
		{"1969-12-31", time.Time{}, "from 1970 to 2100"},
		{"yesterday", time.Time{}, "want RFC 3339"},
	} {
		got, err := ParseCSVTime(tt.in)
		switch {
		case tt.err == "" && (err != nil || !got.Equal(tt.want) || got.Location() != time.UTC):
			t.Errorf("ParseCSVTime(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseCSVTime(%q) = %v, %v; want an error mentioning %q", tt.in, got, err, tt.err)
		}
	}
}

// FuzzParseResultsCSV: whatever the bytes, the reader answers rows or an
// error the API maps to 400/413, never panics, and every row it accepts
// is storable: a time, at least one finite metric of the workload with
// its unit, valid tags.
func FuzzParseResultsCSV(f *testing.F) {
	f.Add([]byte(kafka14020CSV(f)))
	f.Add([]byte("time,commit,branch,record-send-rate,tag:build\n2024.01.01 3:00:00 +0100,aaa0,main,154023,1\n"))
	f.Add([]byte("time,record-send-rate\n1704250800.5,1e3\n"))
	f.Add([]byte("\ufefftime,\"record-send-rate\"\n\"2024-01-01\",\"1,5\"\n"))
	f.Add([]byte("time,x\n2024-01-01,1\n"))
	f.Add([]byte("time,commit,record-send-rate\n2024-01-01 10:00:00 EST,a,1\n"))
	f.Add([]byte("time,record-send-rate\n2024-01-01 10:00:00.5 -0500 EST,1\n999999999999,2\n"))
	f.Add([]byte("time,commit,tag:commit,record-send-rate\n9999-12-31T23:59:59-14:00,a,b,1\n"))
	known := runner.Metrics(rundoc.Producer)
	units := map[string]string{}
	for _, m := range known {
		units[m.Name] = m.Unit
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseResultsCSV(bytes.NewReader(data), known)
		if err != nil {
			// Bad input (a 400 from the server) or over a limit (a 413),
			// on the file.
			var fe *rundoc.FieldError
			var le *LimitError
			if !(errors.As(err, &fe) && fe.Field == "file") && !(errors.As(err, &le) && le.Field == "file") {
				t.Fatalf("error %v is neither a 400 nor a 413", err)
			}
			return
		}
		if len(rows) == 0 {
			t.Fatal("no rows and no error")
		}
		for _, r := range rows {
			if r.At.Before(minRunTime) || !r.At.Before(maxRunTime) || r.At.Location() != time.UTC || len(r.Metrics) == 0 || r.Line < 2 {
				t.Fatalf("row %+v", r)
			}
			for _, m := range r.Metrics {
				if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) || units[m.Name] != m.Unit || m.Unit == "" {
					t.Fatalf("metric %+v", m)
				}
			}
			if err := rundoc.ValidateMeta(r.Meta); err != nil {
				t.Fatalf("meta %v: %v", r.Meta, err)
			}
		}
	})
}
