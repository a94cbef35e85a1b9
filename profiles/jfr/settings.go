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
