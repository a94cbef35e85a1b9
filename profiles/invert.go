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

// vtree is a derived tree while it is merged: its nodes in one slice
// (the root first), a child found by its parent and name in one map.
type vtree struct {
	f     *Flat
	nodes []vnode
	index map[uint64]int32 // parent<<32 | name → node
}

// vnode is a node of a vtree.
type vnode struct {
	name                        int32 // index into the source Flat's names
	parent                      int32
	value, self, base, baseSelf float64
	kids                        []*vnode // set by flat, once no node is added
}

// newVtree starts a tree of about size nodes under a root named root.
func newVtree(f *Flat, root int32, size int) *vtree {
	nodes := make([]vnode, 1, max(size, 1))
	nodes[0] = vnode{name: root, parent: -1}
	return &vtree{f: f, nodes: nodes, index: make(map[uint64]int32, size)}
}

// child returns the child of node p named name, added when missing.
func (t *vtree) child(p, name int32) int32 {
	key := uint64(p)<<32 | uint64(uint32(name))
	if c, ok := t.index[key]; ok {
		return c
	}
	c := int32(len(t.nodes))
	t.nodes = append(t.nodes, vnode{name: name, parent: p})
	t.index[key] = c
	return c
}

// add adds a value and a base value to node i.
func (t *vtree) add(i int32, value, base float64) {
	t.nodes[i].value += value
	t.nodes[i].base += base
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

// flat flattens the tree: names from f, children by name (or by f's
// order), the base columns kept when f has them.
func (t *vtree) flat() *Flat {
	f := t.f
	for i := 1; i < len(t.nodes); i++ {
		p := &t.nodes[t.nodes[i].parent]
		p.kids = append(p.kids, &t.nodes[i])
	}
	for i := range t.nodes {
		slices.SortFunc(t.nodes[i].kids, func(a, b *vnode) int { return strings.Compare(f.names[a.name], f.names[b.name]) })
	}
	r := flatNode[vnode]{
		name:     func(n *vnode) string { return f.names[n.name] },
		value:    func(n *vnode) float64 { return n.value },
		self:     func(n *vnode) float64 { return n.self },
		children: func(n *vnode) []*vnode { return n.kids },
	}
	if f.base != nil {
		r.base = func(n *vnode) float64 { return n.base }
		r.baseSelf = func(n *vnode) float64 { return n.baseSelf }
	}
	return newFlat(&t.nodes[0], f.order, r)
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
	// The inverted tree has about as many frames as the graph.
	t := newVtree(f, f.rootName(), len(f.name))
	if len(f.name) == 0 {
		return t.flat()
	}
	parent := f.parents()
	for i := int32(1); i < int32(len(f.name)); i++ {
		_, self, _, baseSelf := f.cols(i)
		if self == 0 && baseSelf == 0 {
			continue
		}
		t.add(0, self, baseSelf)
		n := int32(0)
		for a := i; a > 0; a = parent[a] {
			n = t.child(n, f.name[a])
			t.add(n, self, baseSelf)
		}
		t.nodes[n].self += self
		t.nodes[n].baseSelf += baseSelf
	}
	root := &t.nodes[0]
	root.self, root.baseSelf = f.rootSelf()
	root.value += root.self
	root.base += root.baseSelf
	return t.flat()
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
	t := newVtree(f, f.name[occ[0]], 0)
	for _, i := range occ {
		value, _, base, _ := f.cols(i)
		t.add(0, value, base)
		n := int32(0)
		for a := parent[i]; a > 0; a = parent[a] {
			n = t.child(n, f.name[a])
			t.add(n, value, base)
		}
		t.nodes[n].self += value
		t.nodes[n].baseSelf += base
	}
	return t.flat(), true
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
	size := 0
	for _, i := range occ {
		size += int(f.end[i] - i)
	}
	t := newVtree(f, f.name[occ[0]], size)
	var merge func(dst, i int32)
	merge = func(dst, i int32) {
		value, self, base, baseSelf := f.cols(i)
		t.add(dst, value, base)
		t.nodes[dst].self += self
		t.nodes[dst].baseSelf += baseSelf
		for c := i + 1; c < f.end[i]; c = f.end[c] {
			merge(t.child(dst, f.name[c]), c)
		}
	}
	for _, i := range occ {
		merge(0, i)
	}
	return t.flat(), true
}
