package profiles

import (
	"regexp"
	"strings"
)

// Flat is a flame-graph tree laid out in pre-order arrays, built once per
// profile and sample type, from which the answers for one view are cut:
// the frames wide enough to draw at a zoom and width (Pruned) and the
// totals of a search over every frame (Match). A large CPU profile has
// ~425,000 frames, of which a few thousand are as wide as half a pixel:
// sending only those is what lets the page paint at once.
type Flat struct {
	names []string
	name  []int32
	value []int64
	self  []int64
	// w is a frame's drawn width in value units, as the browser lays it
	// out: value > 0 ? max(value, self + Σ w(children)) : Σ w(children).
	// For profiles without negative values it equals value.
	w   []int64
	end []int32 // end of the subtree (exclusive): children are i+1, end[i+1], …
}

// NewFlat flattens the tree under root (a BuildTree result).
func NewFlat(root *Node) *Flat {
	f := &Flat{}
	if root == nil {
		root = &Node{Name: "root"}
	}
	index := map[string]int32{}
	type item struct {
		n   *Node
		pos int32
	}
	stack := []item{{root, -1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.pos >= 0 { // closing: it.pos's subtree ends here
			f.end[it.pos] = int32(len(f.name))
			continue
		}
		n := it.n
		id, ok := index[n.Name]
		if !ok {
			id = int32(len(f.names))
			index[n.Name] = id
			f.names = append(f.names, n.Name)
		}
		i := int32(len(f.name))
		f.name = append(f.name, id)
		f.value = append(f.value, n.Value)
		f.self = append(f.self, n.Self)
		f.w = append(f.w, 0)
		f.end = append(f.end, 0)
		stack = append(stack, item{pos: i})
		for k := len(n.Children) - 1; k >= 0; k-- {
			stack = append(stack, item{n: n.Children[k], pos: -1})
		}
	}
	// Widths bottom-up: a node's children come after it.
	acc := make([]int64, len(f.name))
	for i := len(f.name) - 1; i >= 0; i-- {
		for c := int32(i) + 1; c < f.end[i]; c = f.end[c] {
			acc[i] += f.w[c]
		}
		if f.value[i] > 0 {
			f.w[i] = max(f.value[i], f.self[i]+acc[i])
		} else {
			f.w[i] = max(0, acc[i])
		}
	}
	return f
}

// Frames is the number of frames, the root included.
func (f *Flat) Frames() int { return len(f.name) }

// PrunedRun is the name index that marks, in Pruned's Nodes, a run of
// adjacent sibling frames left out because each is too narrow to draw.
const PrunedRun = -1

// MaxPruneWidth bounds Pruned's width (pixels).
const MaxPruneWidth = 1 << 16

// Pruned is the flame graph cut for drawing one view: the focused frame's
// ancestors and the frames under it that are at least half a pixel wide
// when the focused frame spans Width pixels (the browser draws no frame
// narrower than that; it shows runs of them as grey strips).
//
// Names and Nodes are encoded as in Compact (pre-order quadruples of name
// index, value, self, child count), with one addition: a quadruple whose
// name index is PrunedRun (-1) stands for a run of adjacent siblings that
// were left out, with their subtrees. Its value is the run's total width
// (the sum of the frames' values for profiles without negative values),
// its third integer is how many frames the run holds, its child count 0.
// An ancestor of the focused frame keeps only the child on the way to it;
// its other children become runs too, before and after that child.
type Pruned struct {
	Names []string `json:"names"`
	Nodes []int64  `json:"nodes"`
	// Width is the width the frames were cut for, in pixels.
	Width int `json:"width"`
	// Focus is the zoomed frame's path as found ("" for the root): the
	// requested one, or its deepest prefix in the profile.
	Focus string `json:"focus"`
	// FocusMissing says that some frames of the requested path are not in
	// the profile.
	FocusMissing bool `json:"focus_missing,omitempty"`
	// Frames is the number of frames of the whole tree; Sent how many of
	// them Nodes holds (runs not counted).
	Frames int `json:"frames"`
	Sent   int `json:"sent"`
}

// SplitFocus splits a focus path as the pages write it (frame names below
// the root joined by ";", with "%" and ";" inside a name written %25 and
// %3B) into names.
func SplitFocus(path string) []string {
	if path == "" {
		return nil
	}
	parts := strings.Split(path, ";")
	for i, p := range parts {
		if strings.Contains(p, "%") {
			p = strings.NewReplacer("%3B", ";", "%3b", ";", "%25", "%").Replace(p)
		}
		parts[i] = p
	}
	return parts
}

func joinFocus(names []string) string {
	esc := strings.NewReplacer("%", "%25", ";", "%3B")
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = esc.Replace(n)
	}
	return strings.Join(out, ";")
}

// resolve returns the chain of frames from the root to the deepest frame
// of path found, and whether all of path was found.
func (f *Flat) resolve(path []string) ([]int32, bool) {
	chain := []int32{0}
	cur := int32(0)
	for _, want := range path {
		found := int32(-1)
		for c := cur + 1; c < f.end[cur]; c = f.end[c] {
			if f.names[f.name[c]] == want {
				found = c
				break
			}
		}
		if found < 0 {
			return chain, false
		}
		chain = append(chain, found)
		cur = found
	}
	return chain, true
}

// Pruned cuts the view of the frame at path (see SplitFocus) at width
// pixels (1..MaxPruneWidth).
func (f *Flat) Pruned(path []string, width int) Pruned {
	width = min(max(width, 1), MaxPruneWidth)
	chain, ok := f.resolve(path)
	p := prunedWriter{f: f, index: map[int32]int64{}, nodes: make([]int64, 0, 256)}
	for k := 0; k < len(chain)-1; k++ {
		a, next := chain[k], chain[k+1]
		var before, after run
		kids := 1
		for c := a + 1; c < f.end[a]; c = f.end[c] {
			switch {
			case c < next:
				before.add(f.w[c])
			case c > next:
				after.add(f.w[c])
			}
		}
		if before.n > 0 {
			kids++
		}
		if after.n > 0 {
			kids++
		}
		p.frame(a, kids)
		p.run(before)
		if k == len(chain)-2 {
			p.subtree(next, width)
		}
		// The run after the chain's child comes after that child's
		// whole written subtree: remember it.
		p.pending = append(p.pending, after)
	}
	if len(chain) == 1 {
		p.subtree(0, width)
	}
	for k := len(p.pending) - 1; k >= 0; k-- {
		p.run(p.pending[k])
	}
	names := make([]string, len(p.order))
	for i, id := range p.order {
		names[i] = f.names[id]
	}
	focus := make([]string, 0, len(chain)-1)
	for _, c := range chain[1:] {
		focus = append(focus, f.names[f.name[c]])
	}
	return Pruned{Names: names, Nodes: p.nodes, Width: width, Focus: joinFocus(focus), FocusMissing: !ok,
		Frames: len(f.name), Sent: p.sent}
}

// run is a run of adjacent siblings left out.
type run struct {
	w int64
	n int64
}

func (r *run) add(w int64) { r.w += w; r.n++ }

type prunedWriter struct {
	f       *Flat
	index   map[int32]int64 // name id → index in order
	order   []int32
	nodes   []int64
	sent    int
	pending []run
}

func (p *prunedWriter) frame(i int32, kids int) {
	id := p.f.name[i]
	ni, ok := p.index[id]
	if !ok {
		ni = int64(len(p.order))
		p.index[id] = ni
		p.order = append(p.order, id)
	}
	p.nodes = append(p.nodes, ni, p.f.value[i], p.f.self[i], int64(kids))
	p.sent++
}

func (p *prunedWriter) run(r run) {
	if r.n > 0 {
		p.nodes = append(p.nodes, PrunedRun, r.w, r.n, 0)
	}
}

// subtree writes frame i and, under it, every frame at least half a pixel
// wide when the frame at the top of the view (i itself) spans width
// pixels; narrower siblings next to each other become one run.
func (p *prunedWriter) subtree(top int32, width int) {
	f := p.f
	scale := float64(width) / float64(f.w[top])
	wide := func(c int32) bool { return f.w[top] > 0 && float64(f.w[c])*scale >= 0.5 }
	var walk func(i int32)
	walk = func(i int32) {
		// Count the children as written: kept frames and runs.
		kids := 0
		inRun := false
		for c := i + 1; c < f.end[i]; c = f.end[c] {
			if wide(c) {
				kids++
				inRun = false
			} else if !inRun {
				kids++
				inRun = true
			}
		}
		p.frame(i, kids)
		var r run
		for c := i + 1; c < f.end[i]; c = f.end[c] {
			if wide(c) {
				p.run(r)
				r = run{}
				walk(c)
			} else {
				r.add(f.w[c])
			}
		}
		p.run(r)
	}
	walk(top)
}

// MatchTotals is what a search matched: Total sums the values of the
// matching frames of the whole graph, a match inside a match not counted
// again; Zoom the same within the focused frame (its whole value when the
// frame or one of its ancestors below the root matches); Count the
// matching frames counted in Total.
type MatchTotals struct {
	Total int64 `json:"total"`
	Zoom  int64 `json:"zoom"`
	Count int   `json:"count"`
	// Focus is the focused frame as found (see Pruned.Focus).
	Focus string `json:"focus"`
}

// Match searches every frame's name with re, with the frame at path
// focused.
func (f *Flat) Match(re *regexp.Regexp, path []string) MatchTotals {
	hit := make([]bool, len(f.names))
	for i, n := range f.names {
		hit[i] = re.MatchString(n)
	}
	var m MatchTotals
	for i := int32(1); i < int32(len(f.name)); {
		if hit[f.name[i]] {
			m.Total += f.value[i]
			m.Count++
			i = f.end[i]
		} else {
			i++
		}
	}
	chain, _ := f.resolve(path)
	focus := chain[len(chain)-1]
	covered := false
	for _, a := range chain[1:] {
		if hit[f.name[a]] {
			covered = true
		}
	}
	if covered {
		m.Zoom = f.value[focus]
	} else {
		for j := focus + 1; j < f.end[focus]; {
			if hit[f.name[j]] {
				m.Zoom += f.value[j]
				j = f.end[j]
			} else {
				j++
			}
		}
	}
	names := make([]string, 0, len(chain)-1)
	for _, c := range chain[1:] {
		names = append(names, f.names[f.name[c]])
	}
	m.Focus = joinFocus(names)
	return m
}

// MatchNames lists the distinct frame names re matches, in the order of
// the flattened tree: what a page highlights. The page never runs the
// expression itself (a JavaScript regexp can take exponential time); it
// looks names up in this list.
func (f *Flat) MatchNames(re *regexp.Regexp) []string {
	out := []string{}
	for _, n := range f.names {
		if re.MatchString(n) {
			out = append(out, n)
		}
	}
	return out
}

// Total is the root's value: the profile's total for the sample type.
func (f *Flat) Total() int64 {
	if len(f.value) == 0 {
		return 0
	}
	return f.value[0]
}
