package main

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestJFRThreadShare: Flight Recorder's threads' CPU over the whole JVM's,
// from the first snapshot with JFR's sampler thread to each thread's last
// sighting (the last snapshot may miss threads of an exiting JVM).
func TestJFRThreadShare(t *testing.T) {
	for _, tc := range []struct {
		name, tsv string
		want      float64
		ok        bool
	}{
		{"no recording", "1\tmain\t100\n2\tmain\t200\n", 0, false},
		{"sampler in the last snapshot only", "1\tmain\t100\n2\tmain\t200\n2\tJFR Thread Samp\t5\n", 0, false},
		{
			name: "span from the sampler's start",
			tsv: "1\tmain\t100\n1\tJFR Recorder Th\t50\n" + // before the recording: not counted
				"2\tmain\t200\n2\tJFR Recorder Th\t60\n2\tJFR Thread Samp\t0\n" +
				"3\tmain\t1100\n3\tJFR Recorder Th\t70\n3\tJFR Thread Samp\t80\n" +
				"4\tmain\t1150\n", // exiting: JFR's threads gone from the snapshot
			// JFR: (70-60) + (80-0) = 90 of main 950 + 90.
			want: 90.0 / 1040.0, ok: true,
		},
		{
			name: "threads of one name counted apart",
			tsv: "1\tGC Thread#0\t0\n1\tGC Thread#0\t0\n1\tJFR Thread Samp\t0\n" +
				"2\tGC Thread#0\t30\n2\tGC Thread#0\t60\n2\tJFR Thread Samp\t10\n",
			want: 10.0 / 100.0, ok: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jvm-threads.tsv")
			if err := os.WriteFile(path, []byte(tc.tsv), 0o644); err != nil {
				t.Fatal(err)
			}
			got, ok := jfrThreadShare(path)
			if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("jfrThreadShare = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
	if _, ok := jfrThreadShare(filepath.Join(t.TempDir(), "missing.tsv")); ok {
		t.Error("a missing file gave a share")
	}
}
