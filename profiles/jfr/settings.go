package jfr

import (
	"fmt"
	"time"
)

// The sampling periods of Settings: JFR's own "profile" settings take
// these too.
const (
	ExecutionPeriod = 10 * time.Millisecond
	NativePeriod    = 20 * time.Millisecond
)

// Settings is a JFR configuration (.jfc) that records only the two
// events Convert reads, ExecutionSample every ExecutionPeriod and
// NativeMethodSample every NativePeriod: a recording started with it
// (-XX:StartFlightRecording=settings=FILE) holds nothing else, where
// JFR's "profile" settings also record allocations, locks, socket and
// file I/O and more, each instrumenting the program being measured.
// Events a configuration does not name stay disabled.
func Settings() string {
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="kbench" description="Thread samples only: what kbench converts to a wall profile" provider="kbench">
  <event name=%q>
    <setting name="enabled">true</setting>
    <setting name="period">%d ms</setting>
  </event>
  <event name=%q>
    <setting name="enabled">true</setting>
    <setting name="period">%d ms</setting>
  </event>
</configuration>
`, ExecutionSample, ExecutionPeriod.Milliseconds(), NativeMethodSample, NativePeriod.Milliseconds())
}

// SamplesNote says what a recording of Settings' events over window
// holds: its sample counts set against the most the periods allow, since
// the JVM skips a sample when the thread does not stop for it in time
// and a loaded machine leaves far fewer.
func (s Summary) SamplesNote(window time.Duration) string {
	return fmt.Sprintf("%d jdk.ExecutionSample events (at most one per thread every %d ms running Java code, about %d per thread over %.1f s) and %d jdk.NativeMethodSample events (every %d ms; threads inside a native method such as writev0 or write0, running or blocked there), merged: thread samples by state, not CPU time; "+
		"the JVM skips a sample when the thread does not stop for it in time, so a loaded machine leaves fewer",
		s.Execution, ExecutionPeriod.Milliseconds(), int64(window/ExecutionPeriod), window.Seconds(), s.Native, NativePeriod.Milliseconds())
}
