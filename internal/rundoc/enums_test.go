package rundoc

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseEnums: each closed set reads exactly its names, refuses
// anything else (other case, blanks, a neighbour set's names) with an
// error that quotes the input and lists every valid name, and Valid
// agrees with the parser.
func TestParseEnums(t *testing.T) {
	type parsed struct {
		v     string
		err   error
		valid bool
	}
	sets := []struct {
		name  string
		parse func(string) parsed
		good  []string
		bad   []string
	}{
		{"workload", func(s string) parsed { v, err := ParseWorkload(s); return parsed{string(v), err, Workload(s).Valid()} },
			[]string{"producer", "consumer", "writepath", "imported"}, []string{"", "Producer", "writepaths", " consumer", "succeeded"}},
		{"status", func(s string) parsed { v, err := ParseStatus(s); return parsed{string(v), err, Status(s).Valid()} },
			[]string{"queued", "running", "succeeded", "failed", "canceled", "interrupted"}, []string{"", "cancelled", "Queued", "done", "producer"}},
		{"source", func(s string) parsed { v, err := ParseSource(s); return parsed{string(v), err, Source(s).Valid()} },
			[]string{"launched", "imported"}, []string{"", "Imported", "uploaded", "client"}},
		{"profile role", func(s string) parsed {
			v, err := ParseProfileRole(s)
			return parsed{string(v), err, ProfileRole(s).Valid()}
		},
			[]string{"client", "broker"}, []string{"", "server", "Client", "cpu"}},
		{"profile kind", func(s string) parsed {
			v, err := ParseProfileKind(s)
			return parsed{string(v), err, ProfileKind(s).Valid()}
		},
			[]string{"cpu", "heap", "allocs", "mutex", "block", "goroutine", "wall", "other"}, []string{"", "CPU", "Wall", "threadcreate", "none", "client"}},
		{"better", func(s string) parsed { v, err := ParseBetter(s); return parsed{string(v), err, Better(s).Valid()} },
			[]string{"higher", "lower", ""}, []string{"Higher", "neither", "up", " "}},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			for _, s := range set.good {
				p := set.parse(s)
				if p.err != nil || p.v != s || !p.valid {
					t.Errorf("%q: parsed %q, %v, valid %v; want itself", s, p.v, p.err, p.valid)
				}
			}
			for _, s := range set.bad {
				p := set.parse(s)
				if p.err == nil || p.v != "" || p.valid {
					t.Errorf("%q: parsed %q, %v, valid %v; want refused", s, p.v, p.err, p.valid)
					continue
				}
				if !strings.Contains(p.err.Error(), `"`+s+`"`) {
					t.Errorf("%q: error %q does not quote the input", s, p.err)
				}
				for _, g := range set.good {
					if g != "" && !strings.Contains(p.err.Error(), g) {
						t.Errorf("%q: error %q does not list %s", s, p.err, g)
					}
				}
			}
		})
	}
}

// TestEnumLists: the lists say which values do what.
func TestEnumLists(t *testing.T) {
	if got := strings.Join(names(Workloads()), " "); got != "producer consumer writepath e2e" {
		t.Errorf("Workloads() = %s", got)
	}
	for _, w := range AllWorkloads() {
		if w.Runnable() != (w != Imported) {
			t.Errorf("%s.Runnable() = %v", w, w.Runnable())
		}
	}
	for _, s := range Statuses() {
		final := s != StatusQueued && s != StatusRunning
		if s.Final() != final {
			t.Errorf("%s.Final() = %v, want %v", s, s.Final(), final)
		}
	}
	if Status("bogus").Final() {
		t.Error("an unknown status is final")
	}
	for _, k := range append(ProfileKinds(), KindWall, KindOther) {
		if k.Captured() != (k != KindOther && k != KindWall) {
			t.Errorf("%s.Captured() = %v", k, k.Captured())
		}
	}
	if got := strings.Join(names(ProfileRoles()), " "); got != "client broker" {
		t.Errorf("ProfileRoles() = %s", got)
	}
	if Neither != "" || !Neither.Valid() {
		t.Errorf("Neither = %q, valid %v: want the empty direction, valid", Neither, Neither.Valid())
	}
	// Their JSON is their name.
	data, err := json.Marshal(Metric{Name: "m", Unit: "ms", Better: LowerIsBetter})
	if err != nil || !strings.Contains(string(data), `"better":"lower"`) {
		t.Errorf("metric JSON %s, %v", data, err)
	}
	data, err = json.Marshal(ProfileFile{Role: RoleBroker, Kind: KindMutex, File: "f"})
	if err != nil || string(data) != `{"role":"broker","kind":"mutex","file":"f"}` {
		t.Errorf("profile file JSON %s, %v", data, err)
	}
}
