package lifecycle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"

	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/profiles"
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
	// histograms are res's window histograms that check, and histLog
	// the text of its histogram log, nil when it has none or it did
	// not check (missing then says why).
	histograms []rundoc.Histogram
	histLog    []byte
}

// MaxHistogramLogBytes bounds a run's histogram log: what the log
// reader takes (hdr.MaxLogBytes), which the runner's log stays within.
const MaxHistogramLogBytes = hdr.MaxLogBytes

// checkHistograms keeps the window histograms of res that check and the
// log when it checks (see runhist.Check, runhist.ReadLog), and
// says in problems why it left any out.
func checkHistograms(res *rundoc.Result, log []byte) (hs []rundoc.Histogram, keptLog []byte, problems []error) {
	for _, h := range res.Histograms {
		if h.Scope != rundoc.HistogramWindow {
			problems = append(problems, fmt.Errorf("histogram %s: scope %q in result.json, where only the window's are", h.Kind, h.Scope))
			continue
		}
		if _, err := runhist.Check(h); err != nil {
			problems = append(problems, fmt.Errorf("histogram %w", err))
			continue
		}
		hs = append(hs, h)
	}
	if log != nil {
		if _, _, err := runhist.ReadLog(bytes.NewReader(log)); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", res.HistogramLog, err))
		} else {
			keptLog = log
		}
	}
	return hs, keptLog, problems
}

// readHistogramLog reads the log file res names in dir (at most
// MaxHistogramLogBytes); nil when it names none.
func readHistogramLog(dir string, res *rundoc.Result) ([]byte, error) {
	if res.HistogramLog == "" {
		return nil, nil
	}
	f, err := os.Open(filepath.Join(dir, filepath.Base(res.HistogramLog)))
	if err != nil {
		return nil, fmt.Errorf("histogram log %s missing: %w", res.HistogramLog, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxHistogramLogBytes+1))
	if err != nil {
		return nil, fmt.Errorf("histogram log %s: %w", res.HistogramLog, err)
	}
	if len(data) > MaxHistogramLogBytes {
		return nil, fmt.Errorf("histogram log %s: over %d bytes", res.HistogramLog, MaxHistogramLogBytes)
	}
	return data, nil
}

// ingest reads what a finished child left in dir: result.json and the
// profiles it names. A profile that cannot be read is noted, and the run
// kept: it is this server's own run.
func ingest(dir string, waitErr error, stderr string) ending {
	e := ending{waitErr: waitErr, stderr: stderr}
	e.res, e.readErr = rundoc.ReadResult(dir)
	if e.readErr != nil {
		return e
	}
	var problems []error
	e.profiles, problems = readProfiles(e.res, func(pf rundoc.ProfileFile) (store.Profile, error) {
		data, err := os.ReadFile(filepath.Join(dir, filepath.Base(pf.File)))
		if err != nil {
			return store.Profile{}, fmt.Errorf("missing: %w", err)
		}
		sum, err := profiles.Summarize(data)
		if err != nil {
			return store.Profile{}, fmt.Errorf("unreadable: %w", err)
		}
		return store.Profile{Data: data, Samples: sum.Samples}, nil
	})
	log, err := readHistogramLog(dir, e.res)
	if err != nil {
		problems = append(problems, err)
	}
	var histProblems []error
	e.histograms, e.histLog, histProblems = checkHistograms(e.res, log)
	problems = append(problems, histProblems...)
	for _, err := range problems {
		e.missing = append(e.missing, err.Error())
	}
	return e
}

// ProfileReader reads a profile a result names (its File, a name inside
// the result's directory) into what the store keeps: Data and Samples,
// and Uploaded when it came from outside the server. Role and Kind are
// filled in from the result.
type ProfileReader func(rundoc.ProfileFile) (store.Profile, error)

// readProfiles reads the profiles res names, in its order; each one read
// fails is an error "profile FILE …" in problems.
func readProfiles(res *rundoc.Result, read ProfileReader) (ps []store.Profile, problems []error) {
	for _, pf := range res.Profiles {
		p, err := read(pf)
		if err != nil {
			problems = append(problems, fmt.Errorf("profile %s %w", pf.File, err))
			continue
		}
		p.Role, p.Kind = pf.Role, pf.Kind
		ps = append(ps, p)
	}
	return ps, problems
}

// ResultOutcome is the outcome of a run kbench measured elsewhere (a
// `kbench run --out DIR` directory posted by `kbench import DIR` or
// `kbench run --server`), read by the same code as this server's own
// runs: succeeded when res is complete, else failed with its error; its
// documents, metrics, series, output and meta as the run wrote them;
// finished when res says. Unlike a run of this server's, nothing may be
// left out: a profile read cannot read, metadata this kbench refuses, or
// a histogram or histogram log (histLog, the text of the file res names)
// that does not check, is an error, and nothing is to be stored.
func ResultOutcome(res *rundoc.Result, read ProfileReader, histLog []byte) (store.Outcome, error) {
	if err := rundoc.ValidateMeta(res.Meta); err != nil {
		return store.Outcome{}, fmt.Errorf("result.json: %w", err)
	}
	if !res.Workload.Runnable() {
		return store.Outcome{}, fmt.Errorf("result.json: workload %q is not one kbench runs", res.Workload)
	}
	e := ending{res: res}
	var problems []error
	e.profiles, problems = readProfiles(res, read)
	switch {
	case res.HistogramLog != "" && histLog == nil:
		problems = append(problems, fmt.Errorf("result.json names the histogram log %s, which was not given", res.HistogramLog))
	case res.HistogramLog == "" && histLog != nil:
		problems = append(problems, errors.New("a histogram log was given, but result.json names none"))
	}
	var histProblems []error
	e.histograms, e.histLog, histProblems = checkHistograms(res, histLog)
	problems = append(problems, histProblems...)
	if len(problems) > 0 {
		return store.Outcome{}, errors.Join(problems...)
	}
	if !res.Complete && res.Error == "" {
		e.failure = "the run did not complete (its result.json says complete: false)"
	}
	o := e.outcome("", 0)
	if !res.FinishedAt.IsZero() {
		o.FinishedAt = res.FinishedAt.UTC()
	}
	return o, nil
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
	o.Histograms, o.HistogramLog = e.histograms, e.histLog
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
