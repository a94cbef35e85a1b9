// Decoding the write-path lab's form.

package server

import (
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/kbench/kbench/internal/launch"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/ui"
)

// presetFromForm reads the preset's form; empty fields take the defaults.
// Fields that are not whole numbers are all reported (a
// rundoc.FieldErrors), with the preset made of the others.
func presetFromForm(form url.Values) (launch.WritepathPreset, error) {
	var p launch.WritepathPreset
	var errs rundoc.FieldErrors
	for _, f := range []struct {
		name string
		dst  **int
	}{{ui.WPFieldRecords, &p.RecordsPerRequest}, {ui.WPFieldRecordSize, &p.RecordSize}, {ui.WPFieldRequests, &p.Requests},
		{ui.WPFieldRepetitions, &p.Repetitions}, {ui.WPFieldInFlight, &p.InFlight}} {
		v := strings.TrimSpace(form.Get(f.name))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs.Add(f.name, "%q is not a whole number", v)
			continue
		}
		*f.dst = &n
	}
	if v := strings.TrimSpace(form.Get(ui.WPFieldDuration)); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			errs.Add(ui.WPFieldDuration, "%q is not a number of seconds", v)
		} else {
			p.Duration = &f
		}
	}
	sink := form.Get(ui.WPFieldSink) == "true"
	p.Sink = &sink
	return p, errs.Err()
}
