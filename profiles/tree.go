package profiles

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// A flame graph is a tree of call stacks: the root stands for the whole
// profile, each node for a function called from its parent's function, and
// a node's Value is the sum of the samples whose stack passes through it.
//
// Frames are named by function name only (pprof's default "functions"
// granularity): two calls of the same function from the same parent are one
// node however many addresses, lines or inlining sites they came from.

// Node is one frame of a flame graph.
type Node struct {
	// Name is the function name; the root is named "root".
	Name string `json:"name"`
	// Value is the total of the samples whose stack passes through this
	// node (its cumulative value); the root's Value is the profile's total.
	Value int64 `json:"value"`
	// Self is the total of the samples whose stack ends here (flat value).
	Self int64 `json:"self"`
	// Children are the callees, sorted by name.
	Children []*Node `json:"children,omitempty"`
}

// SampleType names one of a profile's sample values.
type SampleType struct {
	Type  string `json:"type"`  // e.g. "cpu", "alloc_space", "samples"
	Unit  string `json:"unit"`  // e.g. "nanoseconds", "bytes", "count"
	Index int    `json:"index"` // position in profile.Sample.Value
}

// SampleTypes lists the sample values a profile carries, in order.
func SampleTypes(p *profile.Profile) []SampleType {
	out := make([]SampleType, 0, len(p.SampleType))
	for i, st := range p.SampleType {
		if st == nil {
			continue
		}
		out = append(out, SampleType{Type: st.Type, Unit: st.Unit, Index: i})
	}
	return out
}

// PickSample returns the index of the sample type called name. An empty name
// picks the profile's default as pprof does: DefaultSampleType when the
// profile sets it (and it exists), else the last sample type (for a Go CPU
// profile "cpu", for a heap profile "inuse_space"). An unknown name is an
// error that lists the available ones.
func PickSample(p *profile.Profile, name string) (int, error) {
	if len(p.SampleType) == 0 {
		return 0, fmt.Errorf("profiles: the profile has no sample types")
	}
	want := name
	if want == "" {
		want = p.DefaultSampleType
	}
	if want != "" {
		for i, st := range p.SampleType {
			if st != nil && st.Type == want {
				return i, nil
			}
		}
		if name != "" {
			var avail []string
			for _, st := range p.SampleType {
				if st != nil {
					avail = append(avail, st.Type)
				}
			}
			return 0, fmt.Errorf("profiles: sample type %q not in the profile; available: %s", name, strings.Join(avail, ", "))
		}
	}
	return len(p.SampleType) - 1, nil
}

// BuildTree builds the flame graph of one sample type (an index from
// PickSample or SampleTypes) of p.
//
// Each sample's stack runs from the root to its leaf, the reverse of pprof's
// Location order (Location[0] is the leaf); a Location holding inlined calls
// expands to one frame per Line, outermost caller (Line[len-1]) first and
// innermost (Line[0]) last. A Line without a function, or a Location without
// lines, is named by its address ("0x4a1b2c"). Frames with the same function
// name under the same parent are one node, as in pprof's flame graph.
// Samples whose value is 0 are left out (heap profiles hold many: memory
// allocated and since freed has inuse_space 0), so every node has a non-zero
// Value unless positive and negative values cancel. An index out of range
// yields a root with Value 0 and no children.
//
// For every node, Value = Self + the sum of its children's Values.
func BuildTree(p *profile.Profile, sampleIndex int) *Node {
	b := newTreeBuilder(false)
	b.build(input{p: p, index: sampleIndex, scale: 1})
	return b.tree()
}

// Compact is a flame-graph tree flattened for the browser.
//
// Names is the table of distinct frame names, each once, in order of first
// appearance in a pre-order walk (so Names[0] is "root" for a BuildTree
// result). Nodes holds the tree in pre-order (a node, then its first child's
// whole subtree, then its second child's, ...) as consecutive quadruples of
// integers, four per node:
//
//	Nodes[4*i+0]  index into Names of node i's name
//	Nodes[4*i+1]  node i's value (cumulative: itself and all its descendants)
//	Nodes[4*i+2]  node i's self value (samples ending at node i)
//	Nodes[4*i+3]  the number of node i's direct children
//
// Node 0 is the root. No parent indices are stored: a decoder reads one
// quadruple, then that many child subtrees, each the same way. Children keep
// the order of Node.Children (sorted by name), a node's subtree occupies
// consecutive quadruples, and value = self + the children's values, so a
// renderer can lay children out left to right from their parent's x.
// len(Nodes) is 4 × the node count. Without recursion:
//
//	open = []                                   // [node, children left to read]
//	for i in 0 .. len(Nodes)/4-1:
//	    node = {name: Names[Nodes[4i]], value: Nodes[4i+1], self: Nodes[4i+2], children: []}
//	    if open is not empty: top(open).node.children.push(node); top(open).left -= 1
//	    push(open, [node, Nodes[4i+3]])
//	    while open is not empty and top(open).left == 0: pop(open)
//	// the first node is the root
//
// Values are negative only for profiles with negative samples (a
// DiffProfile). JSON numbers above 2^53 lose precision in JavaScript;
// profile totals (nanoseconds, bytes, counts) stay far below that.
type Compact struct {
	Names []string `json:"names"`
	Nodes []int64  `json:"nodes"`
}

// Compact flattens the tree under n into the Compact encoding.
func (n *Node) Compact() Compact {
	if n == nil {
		return Compact{Names: []string{}, Nodes: []int64{}}
	}
	names, nodes := flatten(n, 4, func(x *Node) []*Node { return x.Children }, func(x *Node) string { return x.Name },
		func(dst []int64, x *Node, id int64) []int64 {
			return append(dst, id, x.Value, x.Self, int64(len(x.Children)))
		})
	return Compact{Names: names, Nodes: nodes}
}

// flatten walks a tree in pre-order and appends each node's row (stride
// integers, the name's index first) to one flat slice, interning names in
// order of first appearance. Shared by the flame-graph and diff encodings.
func flatten[T any, V int64 | float64](root *T, stride int, children func(*T) []*T, name func(*T) string, row func([]V, *T, int64) []V) ([]string, []V) {
	// Size the output exactly: one walk to count is cheaper than growing
	// a slice of millions of integers.
	count := 0
	stack := []*T{root}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = append(stack[:len(stack)-1], children(x)...)
		count++
	}
	names := []string{}
	nodes := make([]V, 0, stride*count)
	index := make(map[string]int64)
	stack = append(stack[:0], root)
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		id, ok := index[name(x)]
		if !ok {
			id = int64(len(names))
			index[name(x)] = id
			names = append(names, name(x))
		}
		nodes = row(nodes, x, id)
		kids := children(x)
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, kids[i])
		}
	}
	return names, nodes
}

// nameTable interns frame names. IDs are dense and start at 0.
type nameTable struct {
	ids  map[string]int32
	list []string
}

func newNameTable() *nameTable {
	return &nameTable{ids: make(map[string]int32)}
}

func (t *nameTable) id(name string) int32 {
	if id, ok := t.ids[name]; ok {
		return id
	}
	id := int32(len(t.list))
	t.ids[name] = id
	t.list = append(t.list, name)
	return id
}

// ranks returns, for each name ID, its position in byte-wise name order.
func (t *nameTable) ranks() []int32 {
	order := make([]int32, len(t.list))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(t.list[a], t.list[b]) })
	rank := make([]int32, len(t.list))
	for r, id := range order {
		rank[id] = int32(r)
	}
	return rank
}

// stacker turns a profile's samples into root-to-leaf sequences of interned
// frame names, expanding inlined calls. Frames of each Location are computed
// once.
type stacker struct {
	names *nameTable
	// byID[id] holds the frames of the Location with that ID when IDs are
	// dense enough; locs holds the Location pointers to check identity.
	byID  [][]int32
	locs  []*profile.Location
	other map[*profile.Location][]int32
	fn    map[*profile.Function]int32
	// backing holds the frames of all locations, cut into byID's slices.
	backing []int32
}

func newStacker(p *profile.Profile, names *nameTable) *stacker {
	s := &stacker{names: names, fn: make(map[*profile.Function]int32, len(p.Function))}
	var maxID uint64
	for _, l := range p.Location {
		if l != nil && l.ID > maxID {
			maxID = l.ID
		}
	}
	if maxID <= uint64(2*len(p.Location)+64) {
		s.byID = make([][]int32, maxID+1)
		s.locs = make([]*profile.Location, maxID+1)
		lines := 0
		for _, l := range p.Location {
			if l != nil {
				lines += max(len(l.Line), 1)
			}
		}
		// One backing array for the frames of all locations.
		s.backing = make([]int32, 0, lines)
		for _, l := range p.Location {
			if l != nil && s.locs[l.ID] == nil {
				s.locs[l.ID] = l
				s.byID[l.ID] = s.locFrames(l)
			}
		}
	}
	return s
}

// frames returns the frames of one Location, outermost first.
func (s *stacker) frames(l *profile.Location) []int32 {
	if l.ID < uint64(len(s.locs)) && s.locs[l.ID] == l {
		return s.byID[l.ID]
	}
	if f, ok := s.other[l]; ok {
		return f
	}
	if s.other == nil {
		s.other = make(map[*profile.Location][]int32)
	}
	f := s.locFrames(l)
	s.other[l] = f
	return f
}

func (s *stacker) locFrames(l *profile.Location) []int32 {
	start := len(s.backing)
	if len(l.Line) == 0 {
		s.backing = append(s.backing, s.names.id(addressName(l)))
	}
	for i := len(l.Line) - 1; i >= 0; i-- {
		s.backing = append(s.backing, s.lineName(l, l.Line[i]))
	}
	return s.backing[start:len(s.backing):len(s.backing)]
}

func (s *stacker) lineName(l *profile.Location, ln profile.Line) int32 {
	f := ln.Function
	if f == nil {
		return s.names.id(addressName(l))
	}
	if id, ok := s.fn[f]; ok {
		return id
	}
	name := f.Name
	if name == "" {
		name = f.SystemName
	}
	if name == "" {
		name = addressName(l)
	}
	id := s.names.id(NormalizeFrameName(name))
	s.fn[f] = id
	return id
}

func addressName(l *profile.Location) string {
	return fmt.Sprintf("0x%x", l.Address)
}

// stack appends the frames of sample x, root first, to buf.
func (s *stacker) stack(x *profile.Sample, buf []int32) []int32 {
	for i := len(x.Location) - 1; i >= 0; i-- {
		if l := x.Location[i]; l != nil {
			buf = append(buf, s.frames(l)...)
		}
	}
	return buf
}

// sampleValue returns x's value at index i scaled by scale and rounded to
// the nearest integer (per sample, exactly as profile.Scale does), and
// whether the index exists.
func sampleValue(x *profile.Sample, i int, scale float64) (int64, bool) {
	if i < 0 || i >= len(x.Value) {
		return 0, false
	}
	v := x.Value[i]
	if scale == 1 {
		return v, true
	}
	return scaleInt(v, scale), true
}

func scaleInt(v int64, scale float64) int64 {
	f := math.Round(float64(v) * scale)
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	case f != f: // NaN
		return 0
	}
	return int64(f)
}

// arenaNode is a tree node during construction. Children form a singly
// linked list; nodes with many children are also indexed in treeBuilder.wide.
// The arena holds no pointers, so the garbage collector never scans it.
type arenaNode struct {
	name        int32
	firstChild  int32
	nextSibling int32
	nchild      int32
	value, self int64
}

// sideValues are a node's values from one side of a diff: sums of
// scaled samples, unrounded.
type sideValues struct{ value, self float64 }

// wideFanout is the child count above which child lookups go through a map
// instead of a list walk.
const wideFanout = 8

type treeBuilder struct {
	names *nameTable
	nodes []arenaNode
	// base and tgt are parallel to nodes, only for diffs, whose values
	// are floats (a side is a mean of scaled runs); nodes' own values
	// are then unused.
	base []sideValues
	tgt  []sideValues
	diff bool
	wide map[uint64]int32 // parent<<32 | name → child, for wide parents
	buf  []int32
}

func newTreeBuilder(diff bool) *treeBuilder {
	b := &treeBuilder{names: newNameTable(), nodes: make([]arenaNode, 1, 1024), diff: diff}
	b.nodes[0] = arenaNode{name: b.names.id("root"), firstChild: -1, nextSibling: -1}
	if diff {
		b.base = make([]sideValues, 1, 1024)
		b.tgt = make([]sideValues, 1, 1024)
	}
	return b
}

func (b *treeBuilder) child(parent int32, name int32) int32 {
	pn := &b.nodes[parent]
	if pn.nchild > wideFanout {
		if c, ok := b.wide[uint64(parent)<<32|uint64(uint32(name))]; ok {
			return c
		}
	} else {
		for c := pn.firstChild; c >= 0; c = b.nodes[c].nextSibling {
			if b.nodes[c].name == name {
				return c
			}
		}
	}
	c := int32(len(b.nodes))
	b.nodes = append(b.nodes, arenaNode{name: name, firstChild: -1, nextSibling: pn.firstChild})
	if b.diff {
		b.base = append(b.base, sideValues{})
		b.tgt = append(b.tgt, sideValues{})
	}
	pn = &b.nodes[parent]
	pn.firstChild = c
	pn.nchild++
	if pn.nchild > wideFanout {
		if b.wide == nil {
			b.wide = make(map[uint64]int32)
		}
		if pn.nchild == wideFanout+1 {
			for x := pn.firstChild; x >= 0; x = b.nodes[x].nextSibling {
				b.wide[uint64(parent)<<32|uint64(uint32(b.nodes[x].name))] = x
			}
		} else {
			b.wide[uint64(parent)<<32|uint64(uint32(name))] = c
		}
	}
	return c
}

// input is one profile's contribution to a tree: which sample type, how it
// is scaled, and whether it fills the base columns. A single tree rounds
// each scaled sample to an integer; a diff adds them unrounded.
type input struct {
	p     *profile.Profile
	index int
	scale float64
	base  bool
	st    *stacker
}

// build adds the inputs' samples to the tree. Zero values are skipped.
func (b *treeBuilder) build(ins ...input) {
	// Every frame may become a node: reserve room for all of them at once,
	// since growing a slice of 10⁵–10⁶ nodes step by step allocates about
	// five times its final size.
	frames := 0
	for k := range ins {
		in := &ins[k]
		in.st = newStacker(in.p, b.names)
		for _, x := range in.p.Sample {
			if x == nil {
				continue
			}
			if v, ok := b.value(x, *in); ok && v != 0 {
				for _, l := range x.Location {
					if l != nil {
						frames += len(in.st.frames(l))
					}
				}
			}
		}
	}
	// Frames shared by many samples are one node: reserve no more than
	// an upload may have (MaxFlameNodes), or a profile of few call paths
	// but many deep samples would reserve gigabytes.
	frames = min(frames, MaxFlameNodes+1)
	b.nodes = slices.Grow(b.nodes, frames)
	if b.diff {
		b.base = slices.Grow(b.base, frames)
		b.tgt = slices.Grow(b.tgt, frames)
	}
	for _, in := range ins {
		b.add(in)
	}
}

// value is the sample's value as the tree counts it: scaled and rounded
// for a single tree, raw for a diff (whose add scales it unrounded), so
// that a diff leaves out only samples whose value is 0.
func (b *treeBuilder) value(x *profile.Sample, in input) (int64, bool) {
	if b.diff {
		return sampleValue(x, in.index, 1)
	}
	return sampleValue(x, in.index, in.scale)
}

func (b *treeBuilder) add(in input) {
	for _, x := range in.p.Sample {
		if x == nil {
			continue
		}
		v, ok := b.value(x, in)
		if !ok || v == 0 {
			continue
		}
		b.buf = in.st.stack(x, b.buf[:0])
		n := int32(0)
		if b.diff {
			// child may grow the slice: index it through its field.
			side := &b.tgt
			if in.base {
				side = &b.base
			}
			fv := float64(v) * in.scale
			(*side)[0].value += fv
			for _, name := range b.buf {
				n = b.child(n, name)
				(*side)[n].value += fv
			}
			(*side)[n].self += fv
			continue
		}
		b.nodes[0].value += v
		for _, name := range b.buf {
			n = b.child(n, name)
			b.nodes[n].value += v
		}
		b.nodes[n].self += v
	}
}

// walkSorted calls visit(i, kids) for every node i in index order with its
// children sorted by name. kids is reused between calls.
func (b *treeBuilder) walkSorted(visit func(i int, kids []int32)) {
	rank := b.names.ranks()
	var kids []int32
	for i := range b.nodes {
		kids = kids[:0]
		for c := b.nodes[i].firstChild; c >= 0; c = b.nodes[c].nextSibling {
			kids = append(kids, c)
		}
		if len(kids) > 1 {
			slices.SortFunc(kids, func(x, y int32) int {
				return int(rank[b.nodes[x].name]) - int(rank[b.nodes[y].name])
			})
		}
		visit(i, kids)
	}
}

func (b *treeBuilder) tree() *Node {
	nodes := make([]Node, len(b.nodes))
	ptrs := make([]*Node, len(b.nodes)-1)
	b.walkSorted(func(i int, kids []int32) {
		a := &b.nodes[i]
		nodes[i] = Node{Name: b.names.list[a.name], Value: a.value, Self: a.self}
		if len(kids) > 0 {
			cs := ptrs[:len(kids):len(kids)]
			ptrs = ptrs[len(kids):]
			for j, c := range kids {
				cs[j] = &nodes[c]
			}
			nodes[i].Children = cs
		}
	})
	return &nodes[0]
}
