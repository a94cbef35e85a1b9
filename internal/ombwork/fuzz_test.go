package ombwork_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/ombwork"
	"github.com/kbench/kbench/runner"
)

// seeds adds the testdata files whose names start with prefix.
func seeds(f *testing.F, prefix string) {
	names, err := filepath.Glob(filepath.Join("testdata", prefix+"*.yaml"))
	if err != nil || len(names) == 0 {
		f.Fatalf("no %s seeds: %v", prefix, err)
	}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a: &x [1]\nb: *x\n"))
	f.Add([]byte("<<: {topics: 1}\n"))
	f.Add([]byte("--- \ntopics: 1\n---\ntopics: 2\n"))
	f.Add([]byte("topicConfig: |\n  k\\u00=v\n"))
}

// FuzzParseWorkload: any bytes are parsed without panicking or
// hanging; a workload that parses translates (with a driver) without
// panicking, and one that translates builds a spec, whose notes are
// text a note may be, or is refused naming its field.
func FuzzParseWorkload(f *testing.F) {
	seeds(f, "workload")
	driver, err := os.ReadFile(filepath.Join("testdata", "driver-kafka-latency.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	d, err := ombwork.ParseDriver(driver)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := ombwork.ParseWorkload(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--omb-workload") {
				t.Fatalf("error %q does not name the workload", err)
			}
			return
		}
		tr, err := ombwork.Translate(w, d, ombwork.Options{Applies: runner.E2ERateApplies, Payload: make([]byte, max(w.MessageSize, 0)%(1<<16))})
		if err != nil {
			return
		}
		if _, err := specOf(tr); err != nil && !strings.Contains(err.Error(), "omb-") {
			t.Fatalf("the spec of a translation is refused without naming a file's field: %v", err)
		}
	})
}

// FuzzParseDriver: as FuzzParseWorkload, for driver files.
func FuzzParseDriver(f *testing.F) {
	seeds(f, "driver")
	workload, err := os.ReadFile(filepath.Join("testdata", "workload-max-rate.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	w, err := ombwork.ParseWorkload(workload)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ombwork.ParseDriver(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--omb-driver") {
				t.Fatalf("error %q does not name the driver", err)
			}
			return
		}
		tr, err := ombwork.Translate(w, d, ombwork.Options{Applies: runner.E2ERateApplies})
		if err != nil {
			return
		}
		if _, err := specOf(tr); err != nil && !strings.Contains(err.Error(), "omb-") {
			t.Fatalf("the spec of a translation is refused without naming a file's field: %v", err)
		}
	})
}
