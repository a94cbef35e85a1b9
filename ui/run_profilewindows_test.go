package ui

import (
	"strings"
	"testing"
)

// TestRunProfileWindows: a run whose client CPU profile is windowed gets
// its interval charts marked for selection (the windows' names, the
// profile's page and flame graph API, each chart's X range and plot);
// one without windows gets none of it.
func TestRunProfileWindows(t *testing.T) {
	u := newTestUI(t)
	v, err := NewRunView(finishedRun(), 0)
	if err != nil {
		t.Fatal(err)
	}
	plain := render(t, u, "run", v)
	if strings.Contains(plain, "window-charts") || strings.Contains(plain, "window-selection") {
		t.Error("a run without profile windows offers a selection")
	}
	if !strings.Contains(plain, `data-x-lo="0" data-x-hi="12.35" data-plot-left="72.0" data-plot-right="620.0"`) {
		t.Error("the interval charts do not say their X range and plot")
	}
	v.SetProfileWindows(42, nil)
	if v.ProfileWindows != nil {
		t.Error("no windows set a selection")
	}
	v.SetProfileWindows(42, []WindowRange{{"0-2", 0, 2}, {"2-4", 2, 4}, {"4-6", 4, 6}, {"6-9", 6, 9}})
	page := render(t, u, "run", v)
	for _, want := range []string{
		`id="window-charts" data-windows="0-2 2-4 4-6 6-9" data-profile-url="/profiles/42" data-flame-api="/api/profiles/42/flamegraph"`,
		`<p class="window-selection" id="window-selection" hidden></p>`,
		`Drag over a chart`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
}
