package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// reporter writes what a run prints. In text mode stdout gets exactly what
// Kafka's tools print and everything else goes to stderr; in JSON mode
// stdout gets one Event per line and the Kafka text travels in events.
type reporter struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	json   bool
	output strings.Builder // all Kafka-format text, for result.json
}

func (r *reporter) emit(e rundoc.Event) {
	if !r.json {
		return
	}
	// Every event carries its version, so a server built from other code
	// notices a change of meaning instead of misreading it.
	e.V = rundoc.EventVersion
	e.Time = time.Now().UTC()
	data, err := json.Marshal(e)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stdout.Write(append(data, '\n'))
}

// kafka prints Kafka-format text.
func (r *reporter) kafka(text string) {
	r.mu.Lock()
	r.output.WriteString(text)
	if !r.json {
		io.WriteString(r.stdout, text)
	}
	r.mu.Unlock()
	r.emit(rundoc.Event{Type: rundoc.EventOutput, Text: text})
}

// note prints a remark for humans: never on stdout in text mode, where
// users expect only what Kafka's tools print.
func (r *reporter) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.mu.Lock()
	if !r.json {
		fmt.Fprintln(r.stderr, msg)
	}
	r.mu.Unlock()
	r.emit(rundoc.Event{Type: rundoc.EventNote, Text: msg})
}

func (r *reporter) phase(name string, total int64) {
	r.emit(rundoc.Event{Type: rundoc.EventPhase, Phase: name, Total: total})
}

func (r *reporter) progress(phase string, done, total int64, elapsed float64) {
	r.emit(rundoc.Event{Type: rundoc.EventProgress, Phase: phase, Done: done, Total: total, Elapsed: elapsed})
}

func (r *reporter) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.output.String()
}

// every calls tick on its own goroutine every d until the returned stop is
// called; stop waits for a tick in progress, so nothing ticks after it.
func every(d time.Duration, tick func(now time.Time)) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case now := <-t.C:
				tick(now)
			}
		}
	}()
	return func() { close(quit); <-done }
}
