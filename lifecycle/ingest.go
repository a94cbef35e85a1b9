package lifecycle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kbench/kbench/rundoc"

	"github.com/kbench/kbench/profiles"
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
	res     *rundoc.Result
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
	e.res, e.readErr = rundoc.ReadResult(dir)
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
		o.Status, o.Error = rundoc.StatusCanceled, "canceled by a user"
	case "shutdown":
		o.Status, o.Error = rundoc.StatusInterrupted, "interrupted: the kbench server stopped during the run"
	case "timeout":
		o.Status, o.Error = rundoc.StatusFailed, fmt.Sprintf("stopped after the server's run timeout (%v)", timeout)
	default:
		switch {
		case e.failure != "":
			o.Status, o.Error = rundoc.StatusFailed, e.failure
		case e.waitErr == nil && e.readErr == nil && e.res.Complete:
			o.Status = rundoc.StatusSucceeded
		case e.readErr == nil && e.res.Error != "":
			o.Status, o.Error = rundoc.StatusFailed, e.res.Error
		default:
			o.Status = rundoc.StatusFailed
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
	o.Complete = res.Complete && o.Status == rundoc.StatusSucceeded
	o.Output = res.Output
	// The documents as the run wrote them: the store encodes them.
	o.Environment, o.Measurement = &res.Environment, &res.Measurement
	o.Metrics, o.Series = res.Metrics, res.Series
	// The tags the run recorded itself (the version it was built with)
	// join the run's; tags this kbench would refuse are dropped, with a
	// line saying so, rather than losing the run.
	if err := rundoc.ValidateMeta(res.Meta); err != nil {
		e.missing = append(e.missing, "recorded metadata dropped: "+err.Error())
	} else {
		o.Meta = res.Meta
	}
	for _, m := range e.missing {
		o.Error = strings.TrimSpace(o.Error + "\n" + m)
	}
	o.Profiles = e.profiles
	return o
}
