package rundoc

import (
	"strings"
	"testing"
)

// TestSetDocuments: what decodes is decoded, what does not is kept as
// text with an error naming the document, and no text is ever lost.
func TestSetDocuments(t *testing.T) {
	cases := []struct {
		name, env, meas string
		wantEnv, wantM  bool
		errHas          []string
	}{
		{"both", `{"go_version":"go1.26.8"}`, `{"measured_records":5}`, true, true, nil},
		{"none", "", "", false, false, nil},
		{"null and empty objects are none", "null", " {} ", false, false, nil},
		{"a newer kbench's field", `{"go_version":"go1.26.8","from_the_future":1}`, "", true, false, nil},
		{"bad environment", `{not json`, `{"measured_records":5}`, false, true, []string{"run 7: environment"}},
		{"bad measurement", `{"go_version":"x"}`, `[1]`, true, false, []string{"run 7: measurement"}},
		{"both bad", `"text"`, `{"measured_records":"many"}`, false, false, []string{"environment", "measurement"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Run{ID: 7}
			r.SetDocuments(c.env, c.meas)
			if r.Documents.Environment != c.env || r.Documents.Measurement != c.meas {
				t.Errorf("documents %+v, want the text as given", r.Documents)
			}
			if (r.Environment != nil) != c.wantEnv || (r.Measurement != nil) != c.wantM {
				t.Errorf("decoded environment %v measurement %v, want %v %v", r.Environment != nil, r.Measurement != nil, c.wantEnv, c.wantM)
			}
			if len(c.errHas) == 0 && r.DocumentErr != nil {
				t.Errorf("error %v, want none", r.DocumentErr)
			}
			for _, s := range c.errHas {
				if r.DocumentErr == nil || !strings.Contains(r.DocumentErr.Error(), s) {
					t.Errorf("error %v, want one saying %q", r.DocumentErr, s)
				}
			}
		})
	}
	r := Run{}
	r.SetDocuments(`{"go_version":"go1.26.8"}`, `{"measured_records":5,"window_seconds":1.5}`)
	if r.Environment.GoVersion != "go1.26.8" || r.Measurement.MeasuredRecords != 5 || r.Measurement.WindowSeconds != 1.5 {
		t.Errorf("decoded %+v %+v", r.Environment, r.Measurement)
	}
}
