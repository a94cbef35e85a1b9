package jfr_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/profiles/jfr"
)

// TestConvertFixtures: testdata/gather.json and per-buffer.json are
// events of two recordings of testdata/WriteLoop.java as jfr print --json
// printed them (fields kbench ignores dropped, a few dozen events kept),
// so that packages without a JDK convert real JVM stacks too. Each event
// is one sample; the write-path panel sees gather (writev0) in one and
// single (write0) in the other.
func TestConvertFixtures(t *testing.T) {
	for _, c := range []struct{ file, path, native string }{
		{"gather.json", "gather", "sun.nio.ch.FileDispatcherImpl.writev0"},
		{"per-buffer.json", "single", "sun.nio.ch.FileDispatcherImpl.write0"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			p, sum, err := jfr.Convert(strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			exec := int64(strings.Count(string(data), `"type":"jdk.ExecutionSample"`))
			native := int64(strings.Count(string(data), `"type":"jdk.NativeMethodSample"`))
			if sum.Execution != exec || sum.Native != native || sum.Skipped != 0 {
				t.Errorf("summary %+v; the file has %d execution and %d native events", sum, exec, native)
			}
			if !frames(p, jfr.StateNative)[c.native] {
				t.Errorf("no %s in the native samples", c.native)
			}
			rep := profiles.WritePaths(p, 0)
			var top profiles.WritePathRow
			for _, r := range rep.Rows {
				if r.Direction == "write" && r.Value > top.Value {
					top = r
				}
			}
			if top.Path != c.path || !containsStr(top.Frames, c.native) {
				t.Errorf("largest write row %+v; want path %s with %s", top, c.path, c.native)
			}
			if got := profiles.Kind(p); got != "wall" {
				t.Errorf("profiles.Kind = %q, want wall", got)
			}
		})
	}
}

func containsStr(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestConvertWindows: with Options.Window every sample carries the window
// its event's time falls in, events of one stack in two windows are two
// samples, and the windows' samples add up to the events.
func TestConvertWindows(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "gather.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The recording's events span 17:15:53.43 to 17:15:54.31; cut it at
	// 53.8 and count the events on each side from the file itself.
	cut := time.Date(2026, 12, 1, 17, 15, 53, 800_000_000, time.UTC)
	var before, after int64
	for _, m := range regexp.MustCompile(`"startTime":"([^"]+)"`).FindAllStringSubmatch(string(data), -1) {
		ts, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			t.Fatal(err)
		}
		if ts.Before(cut) {
			before++
		} else {
			after++
		}
	}
	if before == 0 || after == 0 {
		t.Fatalf("the cut leaves %d events before and %d after: pick another", before, after)
	}
	p, _, err := jfr.ConvertWith(strings.NewReader(string(data)), jfr.Options{Window: func(ts time.Time) string {
		if ts.Before(cut) {
			return "0-2"
		}
		return "2-4"
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, s := range p.Sample {
		w := s.Label[jfr.LabelWindow]
		if len(w) != 1 {
			t.Fatalf("sample with window label %q", w)
		}
		got[w[0]] += s.Value[0]
	}
	if got["0-2"] != before || got["2-4"] != after || len(got) != 2 {
		t.Errorf("samples by window %v; the file has %d events before the cut and %d after", got, before, after)
	}
	plain, _, err := jfr.Convert(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) <= len(plain.Sample) {
		t.Errorf("%d windowed samples, %d without windows: a stack seen in both windows must be two samples", len(p.Sample), len(plain.Sample))
	}
}

// TestWritePathDiffNamesTheLambdaOnce: the two recordings ran the same
// reader thread, WriteLoop$$Lambda$90, in two JVMs that gave its class
// different addresses (+0x00007f1c… and +0x00007f56…). Their diff holds
// it once, under its normalised name, with the raw names as variants.
func TestWritePathDiffNamesTheLambdaOnce(t *testing.T) {
	var ps []*profile.Profile
	for _, file := range []string{"gather.json", "per-buffer.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := jfr.Convert(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	d, err := profiles.DiffRuns([]profiles.RunInput{{RunID: 1, Prof: ps[0], Ref: 1}}, []profiles.RunInput{{RunID: 2, Prof: ps[1], Ref: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var lambdas []*profiles.DiffNode
	var walk func(n *profiles.DiffNode)
	walk = func(n *profiles.DiffNode) {
		if strings.Contains(n.Name, "WriteLoop$$Lambda") {
			lambdas = append(lambdas, n)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(d)
	if len(lambdas) != 1 || lambdas[0].Name != "WriteLoop$$Lambda$90.run" || lambdas[0].Base == 0 || lambdas[0].Value == 0 {
		for _, n := range lambdas {
			t.Logf("frame %q base %v value %v", n.Name, n.Base, n.Value)
		}
		t.Fatalf("%d WriteLoop lambda frames, want one WriteLoop$$Lambda$90.run in both sides", len(lambdas))
	}
	for _, c := range profiles.TopChanges(ps[0], ps[1], 0, 0, 1, 0) {
		if strings.Contains(c.Name, "+0x") {
			t.Errorf("change %q names a JVM address", c.Name)
		}
	}
	v := profiles.NameVariants(ps...)["WriteLoop$$Lambda$90.run"]
	if len(v) != 2 || !strings.Contains(v[0], "0x00007f1c28007a08") || !strings.Contains(v[1], "0x00007f56b8007a08") {
		t.Errorf("variants %q, want both JVMs' names", v)
	}
}
