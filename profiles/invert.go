package profiles

import (
	"slices"
	"strings"
)

// The derived views of a flame graph, each built from the whole,
// untruncated Flat and returned as a Flat of its own, so that Rows cuts
// them (zoom, width, search) as it cuts the graph itself:
//
//   - Inverted: the bottom-up tree, leaves first;
//   - Callers and Callees: the two halves of a function's sandwich.
//
// Each keeps the invariant of a flame graph's frames, value = self + the
// children's values, so the browser lays them out as any graph; a diff's
// base columns are carried through the same way.

// vnode is a node of a derived tree while it is merged.
type vnode struct {
	name                        int32 // index into the source Flat's names
	value, self, base, baseSelf float64
	kids                        map[int32]*vnode
	children                    []*vnode
}

func (n *vnode) child(name int32) *vnode {
	if n.kids == nil {
		n.kids = map[int32]*vnode{}
	}
	c := n.kids[name]
	if c == nil {
		c = &vnode{name: name}
		n.kids[name] = c
	}
	return c
}

// add adds a value and a base value to n.
func (n *vnode) add(value, base float64) {
	n.value += value
	n.base += base
}

// parents returns each frame's parent (-1 for the root).
func (f *Flat) parents() []int32 {
	p := make([]int32, len(f.name))
	if len(p) == 0 {
		return p
	}
	p[0] = -1
	for i := int32(0); i < int32(len(f.name)); i++ {
		for c := i + 1; c < f.end[i]; c = f.end[c] {
			p[c] = i
		}
	}
	return p
}

// derived flattens a tree merged from f: names from f, children by name
// (or by order), the base columns kept when f has them.
func (f *Flat) derived(root *vnode) *Flat {
	var sortKids func(n *vnode)
	sortKids = func(n *vnode) {
		n.children = make([]*vnode, 0, len(n.kids))
		for _, c := range n.kids {
			n.children = append(n.children, c)
		}
		slices.SortFunc(n.children, func(a, b *vnode) int { return strings.Compare(f.names[a.name], f.names[b.name]) })
		for _, c := range n.children {
			sortKids(c)
		}
	}
	sortKids(root)
	r := flatNode[vnode]{
		name:     func(n *vnode) string { return f.names[n.name] },
		value:    func(n *vnode) float64 { return n.value },
		self:     func(n *vnode) float64 { return n.self },
		children: func(n *vnode) []*vnode { return n.children },
	}
	if f.base != nil {
		r.base = func(n *vnode) float64 { return n.base }
		r.baseSelf = func(n *vnode) float64 { return n.baseSelf }
	}
	return newFlat(root, f.order, r)
}

// rootName is the name index of f's root (the synthetic "root").
func (f *Flat) rootName() int32 {
	if len(f.name) == 0 {
		return 0
	}
	return f.name[0]
}

// cols returns frame i's value, self, base and base self (0 base for a
// profile).
func (f *Flat) cols(i int32) (value, self, base, baseSelf float64) {
	value, self = f.value[i], f.self[i]
	if f.base != nil {
		base, baseSelf = f.base[i], f.baseSelf[i]
	}
	return
}

// Inverted is the bottom-up graph: under the root, every function that
// has self value (the stacks' leaves), then its callers, up to the
// stacks' outermost frames. A frame's value is the self value of the
// leaves reached through it; its self the part of that whose stack ends
// there (the outermost frame of the stack). The root's value is the
// graph's total self value, which is its total.
func (f *Flat) Inverted() *Flat {
	root := &vnode{name: f.rootName()}
	if len(f.name) == 0 {
		return f.derived(root)
	}
	parent := f.parents()
	for i := int32(1); i < int32(len(f.name)); i++ {
		_, self, _, baseSelf := f.cols(i)
		if self == 0 && baseSelf == 0 {
			continue
		}
		root.add(self, baseSelf)
		n := root
		for a := i; a > 0; a = parent[a] {
			n = n.child(f.name[a])
			n.add(self, baseSelf)
		}
		n.self += self
		n.baseSelf += baseSelf
	}
	root.self, root.baseSelf = f.rootSelf()
	root.value += root.self
	root.base += root.baseSelf
	return f.derived(root)
}

// rootSelf is the root's own self values (normally 0).
func (f *Flat) rootSelf() (self, baseSelf float64) {
	if len(f.name) == 0 {
		return 0, 0
	}
	_, self, _, baseSelf = f.cols(0)
	return self, baseSelf
}

// outermost lists the frames named name that have no ancestor of the
// same name: together they hold the function's total once per stack.
func (f *Flat) outermost(name string) []int32 {
	var out []int32
	for i := int32(1); i < int32(len(f.name)); {
		if f.names[f.name[i]] == name {
			out = append(out, i)
			i = f.end[i]
		} else {
			i++
		}
	}
	return out
}

// Callers is the upper half of the sandwich of the function named name:
// the function as the root, and under it its callers, the stacks leading
// to it inverted (caller, its caller, …) and merged over all its call
// sites (each stack above the function's outermost frame in it). The
// root's value is the function's total; a frame's self is the part of
// its value whose stack begins at it (the function called from the
// stack's outermost frame: the root's self when the function is itself
// outermost). ok is false when the graph has no frame of the function.
func (f *Flat) Callers(name string) (g *Flat, ok bool) {
	occ := f.outermost(name)
	if len(occ) == 0 {
		return nil, false
	}
	parent := f.parents()
	root := &vnode{name: f.name[occ[0]]}
	for _, i := range occ {
		value, _, base, _ := f.cols(i)
		root.add(value, base)
		n := root
		for a := parent[i]; a > 0; a = parent[a] {
			n = n.child(f.name[a])
			n.add(value, base)
		}
		n.self += value
		n.baseSelf += base
	}
	return f.derived(root), true
}

// Callees is the lower half of the sandwich of the function named name:
// the function as the root, and under it the subtrees under every
// outermost frame of it, merged. The root's value is the function's
// total and its self the self of those frames (a recursive call's self
// stays in its own frame below). ok is false when the graph has no frame
// of the function.
func (f *Flat) Callees(name string) (g *Flat, ok bool) {
	occ := f.outermost(name)
	if len(occ) == 0 {
		return nil, false
	}
	root := &vnode{name: f.name[occ[0]]}
	var merge func(dst *vnode, i int32)
	merge = func(dst *vnode, i int32) {
		value, self, base, baseSelf := f.cols(i)
		dst.add(value, base)
		dst.self += self
		dst.baseSelf += baseSelf
		for c := i + 1; c < f.end[i]; c = f.end[c] {
			merge(dst.child(f.name[c]), c)
		}
	}
	for _, i := range occ {
		merge(root, i)
	}
	return f.derived(root), true
}
