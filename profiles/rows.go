package profiles

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Flat is a flame-graph tree laid out in pre-order arrays, built once per
// profile, sample type, filters and order, from which the answers for one
// view are cut (Rows): the frames wide enough to draw at a zoom and width,
// and the totals of a search over every frame. A large CPU profile has
// ~425,000 frames, of which a few thousand are as wide as half a pixel:
// sending only those is what lets the page paint at once.
//
// Values are float64 so that one Flat serves both a profile (whole
// numbers, exact up to 2^53) and a differential graph, whose sides may be
// means of scaled runs.
type Flat struct {
	names []string
	name  []int32
	value []float64
	self  []float64
	// base and baseSelf are a diff's base columns (nil for a profile).
	base     []float64
	baseSelf []float64
	// w is a frame's drawn width in value units, as the browser lays it
	// out: value > 0 ? max(value, self + Σ w(children))
	//               : max(base, Σ w(children)) (base 0 for a profile).
	// For profiles without negative values it equals value.
	w     []float64
	end   []int32 // end of the subtree (exclusive): children are i+1, end[i+1], …
	order Order
}

// Order is the order of a frame's children, left to right.
type Order string

const (
	// OrderName sorts children by name (the trees' own order).
	OrderName Order = "name"
	// OrderLeftHeavy sorts children by descending value (a diff's
	// target value, then its base value), ties by name: the heaviest
	// stacks gather on the left, as in speedscope's left-heavy view.
	OrderLeftHeavy Order = "left-heavy"
)

// ParseOrder reads an order= parameter ("" is OrderName).
func ParseOrder(s string) (Order, error) {
	switch Order(s) {
	case "", OrderName:
		return OrderName, nil
	case OrderLeftHeavy:
		return OrderLeftHeavy, nil
	}
	return "", fmt.Errorf("profiles: order %q: must be %s or %s", s, OrderName, OrderLeftHeavy)
}

// flatNode is what NewFlat and NewDiffFlat read of a tree node.
type flatNode[T any] struct {
	name           func(*T) string
	value, self    func(*T) float64
	base, baseSelf func(*T) float64 // nil for a profile
	children       func(*T) []*T
}

// NewFlat flattens the tree under root (a BuildTree result), its
// children in order.
func NewFlat(root *Node, order Order) *Flat {
	if root == nil {
		root = &Node{Name: "root"}
	}
	return newFlat(root, order, flatNode[Node]{
		name:     func(n *Node) string { return n.Name },
		value:    func(n *Node) float64 { return float64(n.Value) },
		self:     func(n *Node) float64 { return float64(n.Self) },
		children: func(n *Node) []*Node { return n.Children },
	})
}

// NewDiffFlat flattens a differential tree (a Diff result): Rows then
// carry the base columns too.
func NewDiffFlat(root *DiffNode, order Order) *Flat {
	if root == nil {
		root = &DiffNode{Name: "root"}
	}
	// The conversions keep this independent of the exact numeric type
	// of DiffNode's values.
	return newFlat(root, order, flatNode[DiffNode]{
		name:     func(n *DiffNode) string { return n.Name },
		value:    func(n *DiffNode) float64 { return float64(n.Value) },
		self:     func(n *DiffNode) float64 { return float64(n.Self) },
		base:     func(n *DiffNode) float64 { return float64(n.Base) },
		baseSelf: func(n *DiffNode) float64 { return float64(n.BaseSelf) },
		children: func(n *DiffNode) []*DiffNode { return n.Children },
	})
}

func newFlat[T any](root *T, order Order, r flatNode[T]) *Flat {
	f := &Flat{order: order}
	diff := r.base != nil
	index := map[string]int32{}
	type item struct {
		n   *T
		pos int32
	}
	stack := []item{{root, -1}}
	var kids []*T
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.pos >= 0 { // closing: it.pos's subtree ends here
			f.end[it.pos] = int32(len(f.name))
			continue
		}
		n := it.n
		name := r.name(n)
		id, ok := index[name]
		if !ok {
			id = int32(len(f.names))
			index[name] = id
			f.names = append(f.names, name)
		}
		i := int32(len(f.name))
		f.name = append(f.name, id)
		f.value = append(f.value, r.value(n))
		f.self = append(f.self, r.self(n))
		if diff {
			f.base = append(f.base, r.base(n))
			f.baseSelf = append(f.baseSelf, r.baseSelf(n))
		}
		f.w = append(f.w, 0)
		f.end = append(f.end, 0)
		stack = append(stack, item{pos: i})
		kids = append(kids[:0], r.children(n)...)
		if order == OrderLeftHeavy {
			slices.SortStableFunc(kids, func(a, b *T) int {
				if c := cmp.Compare(r.value(b), r.value(a)); c != 0 {
					return c
				}
				if diff {
					if c := cmp.Compare(r.base(b), r.base(a)); c != 0 {
						return c
					}
				}
				return strings.Compare(r.name(a), r.name(b))
			})
		}
		for k := len(kids) - 1; k >= 0; k-- {
			stack = append(stack, item{n: kids[k], pos: -1})
		}
	}
	// Widths bottom-up: a node's children come after it.
	acc := make([]float64, len(f.name))
	for i := len(f.name) - 1; i >= 0; i-- {
		for c := int32(i) + 1; c < f.end[i]; c = f.end[c] {
			acc[i] += f.w[c]
		}
		switch {
		case f.value[i] > 0:
			f.w[i] = max(f.value[i], f.self[i]+acc[i])
		case diff:
			f.w[i] = max(f.base[i], acc[i], 0)
		default:
			f.w[i] = max(0, acc[i])
		}
	}
	return f
}

// Frames is the number of frames, the root included.
func (f *Flat) Frames() int { return len(f.name) }

// Total is the root's value: the profile's total for the sample type
// (a diff's target total).
func (f *Flat) Total() float64 {
	if len(f.value) == 0 {
		return 0
	}
	return f.value[0]
}

// BaseTotal is a diff's root base value (0 for a profile).
func (f *Flat) BaseTotal() float64 {
	if len(f.base) == 0 {
		return 0
	}
	return f.base[0]
}

// OtherRun is the name index that marks, in Rows.Levels, a run of
// adjacent sibling frames folded into one "other" box because each is
// too narrow to draw.
const OtherRun = -1

// MaxPruneWidth bounds Rows' width (pixels).
const MaxPruneWidth = 1 << 16

// Strides of Rows.Levels: a profile's frames have 5 numbers, a diff's 7.
const (
	RowsStride     = 5
	DiffRowsStride = 7
)

// Rows is the flame graph cut for drawing one view (format=rows): the
// zoomed frame's ancestors and the frames under it that are at least half
// a pixel wide when the zoomed frame spans Width pixels (the browser draws
// no frame narrower than that), laid out as rows, one per depth.
//
// Levels[d] holds the frames at depth d (Levels[0] is the root alone),
// left to right, Stride numbers each:
//
//	profile (Stride 5): offset, width, value, self, name
//	diff    (Stride 7): offset, width, value, self, base, base_self, name
//
// offset is the gap between the previous frame's right edge in that row
// (0 at the row's start) and this frame's left edge, and width the
// frame's drawn width, both in value units: a frame's left edge is the
// sum of the offsets and widths before it in its row, and a frame's
// parent is the frame of the row above whose span holds that edge. value
// and self are the frame's cumulative and flat values (a diff's target),
// base and base_self a diff's base values (already normalised). name
// indexes Names, or is OtherRun (-1): a folded run of adjacent siblings
// left out with their subtrees, whose width and value are the run's
// total and whose self is how many frames it folds. An ancestor of the
// zoomed frame keeps only the child on the way to it; its other children
// are folded into runs before and after that child. Numbers are JSON
// numbers: whole for a profile, fractional possibly for a diff.
type Rows struct {
	Names  []string    `json:"names"`
	Levels [][]float64 `json:"levels"`
	Stride int         `json:"stride"`
	// Width is the width the frames were cut for, in pixels.
	Width int `json:"width"`
	// Order is the children's order (name or left-heavy).
	Order Order `json:"order"`
	// Zoom is the zoomed frame's path as found ("" for the root): the
	// requested one, or its deepest prefix in the graph.
	Zoom string `json:"zoom"`
	// ZoomMissing says that some frames of the requested path are not in
	// the graph.
	ZoomMissing bool `json:"zoom_missing,omitempty"`
	// Frames is the number of frames of the whole (untruncated) tree;
	// Sent how many of them Levels holds (runs not counted).
	Frames int `json:"frames"`
	Sent   int `json:"sent"`
	// Match is a search's answer, computed over every frame of the
	// whole tree (nil without a search).
	Match *RowsMatch `json:"match,omitempty"`
}

// RowsMatch is what a search matched, over the whole tree: Total sums
// the values of the matching frames, a match inside a match not counted
// again; Zoom the same within the zoomed frame (its whole value when the
// frame or one of its ancestors below the root matches); Count the
// matching frames counted in Total. BaseTotal and BaseZoom are a diff's
// base sums the same way. Names lists the indexes into Rows.Names of the
// names that match: the frames a page highlights (it never runs the
// expression itself).
type RowsMatch struct {
	Total     float64 `json:"total"`
	Zoom      float64 `json:"zoom"`
	Count     int     `json:"count"`
	BaseTotal float64 `json:"base_total,omitempty"`
	BaseZoom  float64 `json:"base_zoom,omitempty"`
	Names     []int   `json:"names"`
}

// SplitZoom splits a zoom path as the pages write it (frame names below
// the root joined by ";", with "%" and ";" inside a name written %25 and
// %3B) into names.
func SplitZoom(path string) []string {
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

// JoinZoom is SplitZoom's inverse.
func JoinZoom(names []string) string {
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

// Resolves says whether path (see SplitZoom) names a frame of the graph
// from the root's child down: what tells a legacy focus= zoom path from
// a focus regexp.
func (f *Flat) Resolves(path []string) bool {
	if len(path) == 0 {
		return false
	}
	_, ok := f.resolve(path)
	return ok
}

// Rows cuts the view of the frame at path (see SplitZoom) at width pixels
// (clamped to 1..MaxPruneWidth), with the totals of search when re is not
// nil.
func (f *Flat) Rows(path []string, width int, re *regexp.Regexp) Rows {
	width = min(max(width, 1), MaxPruneWidth)
	chain, ok := f.resolve(path)
	stride := RowsStride
	if f.base != nil {
		stride = DiffRowsStride
	}
	w := rowsWriter{f: f, index: map[int32]int{}, stride: stride}
	x := 0.0
	for k := 0; k < len(chain)-1; k++ {
		a, next := chain[k], chain[k+1]
		var before, after run
		for c := a + 1; c < f.end[a]; c = f.end[c] {
			switch {
			case c < next:
				before.add(f, c)
			case c > next:
				after.add(f, c)
			}
		}
		w.frame(a, k, x)
		w.run(before, k+1, x)
		w.run(after, k+1, x+before.w+f.w[next])
		x += before.w
	}
	top := chain[len(chain)-1]
	w.subtree(top, len(chain)-1, x, width)
	rows := Rows{Names: make([]string, len(w.order)), Levels: w.levels, Stride: stride, Width: width, Order: f.order,
		ZoomMissing: !ok, Frames: len(f.name), Sent: w.sent}
	if rows.Order == "" {
		rows.Order = OrderName
	}
	for i, id := range w.order {
		rows.Names[i] = f.names[id]
	}
	zoom := make([]string, 0, len(chain)-1)
	for _, c := range chain[1:] {
		zoom = append(zoom, f.names[f.name[c]])
	}
	rows.Zoom = JoinZoom(zoom)
	// Ancestors' runs after the zoom path are written before the path's
	// next frame: order each row by left edge, then turn left edges into
	// gaps after the previous frame.
	for d, lv := range rows.Levels {
		lv = sortByEdge(lv, stride)
		rows.Levels[d] = lv
		end := 0.0
		for i := 0; i < len(lv); i += stride {
			left := lv[i]
			lv[i] = left - end
			end = left + lv[i+1]
		}
	}
	if rows.Levels == nil {
		rows.Levels = [][]float64{}
	}
	if re != nil {
		m := f.match(re, chain)
		m.Names = []int{}
		for i, n := range rows.Names {
			if re.MatchString(n) {
				m.Names = append(m.Names, i)
			}
		}
		rows.Match = &m
	}
	return rows
}

// sortByEdge orders a row's frames (stride numbers each, the left edge
// first) by left edge, keeping the order of equal edges.
func sortByEdge(lv []float64, stride int) []float64 {
	n := len(lv) / stride
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(lv[a*stride], lv[b*stride]) })
	out := make([]float64, 0, len(lv))
	for _, i := range idx {
		out = append(out, lv[i*stride:(i+1)*stride]...)
	}
	return out
}

// run is a run of adjacent siblings left out.
type run struct {
	w, value, base float64
	n              int
}

func (r *run) add(f *Flat, c int32) {
	r.w += f.w[c]
	r.value += f.value[c]
	if f.base != nil {
		r.base += f.base[c]
	}
	r.n++
}

type rowsWriter struct {
	f      *Flat
	index  map[int32]int // name id → index in order
	order  []int32
	levels [][]float64
	stride int
	sent   int
}

func (w *rowsWriter) level(d int) []float64 {
	for len(w.levels) <= d {
		w.levels = append(w.levels, []float64{})
	}
	return w.levels[d]
}

// frame writes frame i at depth d with its left edge at x (absolute: the
// offsets are derived once every frame is written).
func (w *rowsWriter) frame(i int32, d int, x float64) {
	f := w.f
	id := f.name[i]
	ni, ok := w.index[id]
	if !ok {
		ni = len(w.order)
		w.index[id] = ni
		w.order = append(w.order, id)
	}
	lv := append(w.level(d), x, f.w[i], f.value[i], f.self[i])
	if w.stride == DiffRowsStride {
		lv = append(lv, f.base[i], f.baseSelf[i])
	}
	w.levels[d] = append(lv, float64(ni))
	w.sent++
}

func (w *rowsWriter) run(r run, d int, x float64) {
	if r.n == 0 {
		return
	}
	lv := append(w.level(d), x, r.w, r.value, float64(r.n))
	if w.stride == DiffRowsStride {
		lv = append(lv, r.base, 0)
	}
	w.levels[d] = append(lv, OtherRun)
}

// subtree writes frame top at depth d and left edge x and, under it,
// every frame at least half a pixel wide when top spans width pixels;
// narrower siblings next to each other become one run.
func (w *rowsWriter) subtree(top int32, d int, x float64, width int) {
	f := w.f
	scale := float64(width) / f.w[top]
	wide := func(c int32) bool { return f.w[top] > 0 && f.w[c]*scale >= 0.5 }
	var walk func(i int32, d int, x float64)
	walk = func(i int32, d int, x float64) {
		w.frame(i, d, x)
		var r run
		rx, cx := x, x
		for c := i + 1; c < f.end[i]; c = f.end[c] {
			if wide(c) {
				w.run(r, d+1, rx)
				r = run{}
				walk(c, d+1, cx)
				cx += f.w[c]
				rx = cx
			} else {
				r.add(f, c)
				cx += f.w[c]
			}
		}
		w.run(r, d+1, rx)
	}
	walk(top, d, x)
}

// match counts what re matches over every frame, with the frame at the
// end of chain zoomed.
func (f *Flat) match(re *regexp.Regexp, chain []int32) RowsMatch {
	hit := make([]bool, len(f.names))
	for i, n := range f.names {
		hit[i] = re.MatchString(n)
	}
	var m RowsMatch
	for i := int32(1); i < int32(len(f.name)); {
		if hit[f.name[i]] {
			m.Total += f.value[i]
			if f.base != nil {
				m.BaseTotal += f.base[i]
			}
			m.Count++
			i = f.end[i]
		} else {
			i++
		}
	}
	zoom := chain[len(chain)-1]
	covered := false
	for _, a := range chain[1:] {
		if hit[f.name[a]] {
			covered = true
		}
	}
	if covered {
		m.Zoom = f.value[zoom]
		if f.base != nil {
			m.BaseZoom = f.base[zoom]
		}
		return m
	}
	for j := zoom + 1; j < f.end[zoom]; {
		if hit[f.name[j]] {
			m.Zoom += f.value[j]
			if f.base != nil {
				m.BaseZoom += f.base[j]
			}
			j = f.end[j]
		} else {
			j++
		}
	}
	return m
}
