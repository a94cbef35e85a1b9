// The viewer's derived views on the format=rows routes (view=): the
// inverted (bottom-up) graph, a function's sandwich (view=callers and
// view=callees with function=) and the top table (view=top with sort=
// and limit=), each built from the whole, filtered graph.

package server

import (
	"fmt"
	"net/url"
	"strconv"
	"sync"

	"github.com/kbench/kbench/client"
	"github.com/kbench/kbench/profiles"
)

// The values of view=.
const (
	viewFlame    = "flame"
	viewInverted = "inverted"
	viewCallers  = "callers"
	viewCallees  = "callees"
	viewTop      = "top"
)

// Bounds of the top table's limit=.
const (
	defaultTopLimit = 100
	maxTopLimit     = 10000
)

// graphView is what view=, function=, sort= and limit= ask for.
type graphView struct {
	view     string // one of the view constants; "" reads as viewFlame
	function string // the sandwich's function (callers, callees)
	sort     string // the top table's column, checked once the graph is known (delta_* need a diff)
	limit    int
}

// readGraphView reads view=, function=, sort= and limit=; a bad value is
// a 400 naming its parameter.
func readGraphView(q url.Values) (graphView, error) {
	g := graphView{view: q.Get("view"), function: q.Get("function"), sort: q.Get("sort"), limit: defaultTopLimit}
	switch g.view {
	case "":
		g.view = viewFlame
	case viewFlame, viewInverted, viewTop:
	case viewCallers, viewCallees:
		if g.function == "" {
			return g, badInput("function", "view=%s needs the function's name", g.view)
		}
	default:
		return g, badInput("view", "must be flame, inverted, callers, callees or top")
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxTopLimit {
			return g, badInput("limit", "must be a whole number from 1 to %d", maxTopLimit)
		}
		g.limit = n
	}
	return g, nil
}

// derivedKey identifies a view derived from a flattened graph.
type derivedKey struct {
	f              *profiles.Flat
	view, function string
}

// derivedViews keeps the last views derived (inverted, callers,
// callees): a page asks again for every zoom and search of them. Keyed
// by the Flat they come from, which the profiles' caches keep.
var derivedViews struct {
	sync.Mutex
	m map[derivedKey]*profiles.Flat
}

const maxDerivedViews = 16

// viewGraph returns the graph g asks for, derived from f (the filtered
// flame graph), and for a sandwich its function's line of the top table.
func viewGraph(f *profiles.Flat, g graphView) (*profiles.Flat, *client.TopFunction, error) {
	if g.view == viewFlame || g.view == "" {
		return f, nil, nil
	}
	var fn *client.TopFunction
	if g.view == viewCallers || g.view == viewCallees {
		t, ok := f.Function(g.function)
		if !ok {
			return nil, nil, badInput("function", "no frame of %q in this graph (with its filters)", g.function)
		}
		fn = wireTopFunction(t)
	}
	key := derivedKey{f, g.view, g.function}
	derivedViews.Lock()
	d, ok := derivedViews.m[key]
	derivedViews.Unlock()
	if ok {
		return d, fn, nil
	}
	switch g.view {
	case viewInverted:
		d = f.Inverted()
	case viewCallers:
		d, _ = f.Callers(g.function)
	case viewCallees:
		d, _ = f.Callees(g.function)
	default:
		return nil, nil, fmt.Errorf("server: view %q is no graph", g.view)
	}
	derivedViews.Lock()
	if derivedViews.m == nil || len(derivedViews.m) >= maxDerivedViews {
		derivedViews.m = map[derivedKey]*profiles.Flat{}
	}
	derivedViews.m[key] = d
	derivedViews.Unlock()
	return d, fn, nil
}

// viewRows cuts the view v asks for from f (the filtered graph) as rows.
func viewRows(f *profiles.Flat, v viewParams) (*client.FlameRows, *client.TopFunction, error) {
	d, fn, err := viewGraph(f, v.graph)
	if err != nil {
		return nil, nil, err
	}
	rows := wireRows(d.Rows(v.zoom, v.width, v.search))
	if v.graph.view != viewFlame {
		rows.View = v.graph.view
	}
	return rows, fn, nil
}

// topTable is the view=top answer over f: every function's self and
// total over the whole graph, sorted and cut to the limit.
func topTable(f *profiles.Flat, g graphView, diff bool) (*client.FlameTop, error) {
	by, err := profiles.ParseTopSort(g.sort, diff)
	if err != nil {
		if diff {
			return nil, badInput("sort", "must be self, total, delta_self or delta_total")
		}
		return nil, badInput("sort", "must be self or total (delta_self and delta_total are a diff's)")
	}
	fs := f.Functions()
	count := len(fs)
	fs = profiles.SortTop(fs, by, g.limit)
	out := &client.FlameTop{Sort: string(by), Limit: g.limit, Count: count, Functions: make([]client.TopFunction, len(fs))}
	for i, t := range fs {
		out.Functions[i] = *wireTopFunction(t)
	}
	return out, nil
}

func wireTopFunction(t profiles.TopFunction) *client.TopFunction {
	return &client.TopFunction{Name: t.Name, Self: t.Self, Total: t.Total, BaseSelf: t.BaseSelf, BaseTotal: t.BaseTotal}
}

// pageGraphQuery is the query a profile page's main graph is cut with:
// the page's own, with view= kept only when it is inverted (the one
// view the page's graph itself draws; flameviews.js adds it to the
// graph's data-src likewise) and without the top table's sort= and
// limit=, which are the page's scripts' own.
func pageGraphQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, vs := range q {
		switch k {
		case "sort", "limit", "function":
			continue
		case "view":
			if q.Get(k) != viewInverted {
				continue
			}
		}
		out[k] = vs
	}
	return out
}

// withGraphView adds a page's view=inverted to its graph's API address
// (dataURL): the page draws the graph bottom-up from its first view on.
func withGraphView(dataURL string, q url.Values) string {
	if q.Get("view") != viewInverted {
		return dataURL
	}
	u, err := url.Parse(dataURL)
	if err != nil {
		return dataURL
	}
	dq := u.Query()
	dq.Set("view", viewInverted)
	u.RawQuery = dq.Encode()
	return u.String()
}
