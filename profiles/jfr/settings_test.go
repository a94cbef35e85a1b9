package jfr

import (
	"strings"
	"testing"
	"time"
)

// TestSamplesNote: the note gives the counts, the periods and how many
// samples a thread could have given over the window.
func TestSamplesNote(t *testing.T) {
	got := Summary{Execution: 12, Native: 40}.SamplesNote(1500 * time.Millisecond)
	for _, want := range []string{"12 jdk.ExecutionSample events", "every 10 ms", "about 150 per thread over 1.5 s", "40 jdk.NativeMethodSample events (every 20 ms", "the JVM skips a sample"} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
}
