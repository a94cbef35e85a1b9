package lifecycle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kbench/kbench/profiles"
	"github.com/kbench/kbench/runner"
	"github.com/kbench/kbench/store"
)

// ending is what a run left behind, read before its final status is
// decided: the status depends on whether the run was asked to stop, and
// a cancel may still arrive until the outcome is stored.
type ending struct {
	// failure says why the run could not be executed (its stored spec,
	// its directory, its process could not start); empty otherwise.
	failure string
	// waitErr and stderr are how its process exited and the tail of what
	// it wrote to stderr.
	waitErr error
	stderr  string
	// res is its result.json, nil when readErr says why there is none.
	res     *runner.Result
	readErr error
	// profiles are the profiles res names that could be read; missing
	// says, one line each, those that could not.
	profiles []store.Profile
	missing  []string
}

// ingest reads what a finished child left in dir: result.json and the
// profiles it names.
func ingest(dir string, waitErr error, stderr string) ending {
	e := ending{waitErr: waitErr, stderr: stderr}
	e.res, e.readErr = runner.ReadResult(dir)
	if e.readErr != nil {
		return e
	}
	for _, pf := range e.res.Profiles {
		data, err := os.ReadFile(filepath.Join(dir, filepath.Base(pf.File)))
		if err != nil {
			e.missing = append(e.missing, "profile "+pf.File+" missing: "+err.Error())
			continue
		}
		sum, err := profiles.Summarize(data)
		if err != nil {
			e.missing = append(e.missing, "profile "+pf.File+" unreadable: "+err.Error())
			continue
		}
		e.profiles = append(e.profiles, store.Profile{Role: pf.Role, Kind: pf.Kind, Data: data, Samples: sum.Samples})
	}
	return e
}

// outcome is the run's outcome when it was stopped early for stopReason
// ("canceled", "shutdown", "timeout"; empty when it was not), timeout
// being the server's run timeout. It is never a running status. What the
// run measured is kept whatever the status.
func (e ending) outcome(stopReason string, timeout time.Duration) store.Outcome {
	o := store.Outcome{FinishedAt: time.Now().UTC()}
	switch stopReason {
	case "canceled":
		o.Status, o.Error = store.StatusCanceled, "canceled by a user"
	case "shutdown":
		o.Status, o.Error = store.StatusInterrupted, "interrupted: the kbench server stopped during the run"
	case "timeout":
		o.Status, o.Error = store.StatusFailed, fmt.Sprintf("stopped after the server's run timeout (%v)", timeout)
	default:
		switch {
		case e.failure != "":
			o.Status, o.Error = store.StatusFailed, e.failure
		case e.waitErr == nil && e.readErr == nil && e.res.Complete:
			o.Status = store.StatusSucceeded
		case e.readErr == nil && e.res.Error != "":
			o.Status, o.Error = store.StatusFailed, e.res.Error
		default:
			o.Status = store.StatusFailed
			o.Error = "the run process failed"
			if e.waitErr != nil {
				o.Error = "the run process failed: " + e.waitErr.Error()
			}
			if tail := strings.TrimSpace(e.stderr); tail != "" {
				o.Error += "\n" + tail
			}
		}
	}
	if e.res == nil {
		return o // nothing measured to keep
	}
	res := e.res
	o.Complete = res.Complete && o.Status == store.StatusSucceeded
	o.Output = res.Output
	if b, err := json.Marshal(res.Environment); err == nil {
		o.Environment = string(b)
	}
	if b, err := json.Marshal(res.Measurement); err == nil {
		o.Measurement = string(b)
	}
	for _, m := range res.Metrics {
		o.Metrics = append(o.Metrics, store.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: m.Better, Help: m.Help})
	}
	for i, p := range res.Series {
		o.Series = append(o.Series, store.SeriesPoint{Seq: i, T: p.T, Records: p.Records, Bytes: p.Bytes, RecordsPerSec: p.RecordsPerSec,
			MBPerSec: p.MBPerSec, LatencyAvgMs: p.LatencyAvgMs, LatencyMaxMs: p.LatencyMaxMs, CPUPercent: p.CPUPercent})
	}
	for _, m := range e.missing {
		o.Error = strings.TrimSpace(o.Error + "\n" + m)
	}
	o.Profiles = e.profiles
	return o
}
