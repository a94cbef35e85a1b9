// Package seriescache keeps what is derived from each series of runs
// (its regressions, its row of the series index) while the series'
// signature (rundoc.SeriesInfo: its succeeded runs' count and ids) is
// unchanged, and knows the store's series generation it is up to date
// with. A write that may change series then costs the signatures of the
// series it touched (SeriesChangedSince, SeriesInfos) and their
// derivation, not a read of every series (100 ms and more over 100,000
// runs) nor the derivation of every one; only when the store cannot say
// which series changed (another process's write without them, a lost
// PostgreSQL connection, a cache thousands of writes behind) does it list
// them all.
//
// It reads the store through Source, which *store.Store satisfies, and
// imports only the run contract (rundoc): the regressions cache, which
// the pages import, uses it without linking a database.
package seriescache

import (
	"context"
	"iter"

	"github.com/kbench/kbench/internal/rundoc"
)

// MaxChanged is the most changed series read one key at a time
// (Source.SeriesInfos) rather than by listing them all: beyond it the
// keys' reads cost about what the whole list does.
const MaxChanged = 2000

// Source is what a Cache reads: the store's series generation, the keys
// of the series changed since one, and the series' signatures.
type Source interface {
	// SeriesGeneration changes after every write that may change which
	// succeeded runs a series holds.
	SeriesGeneration() uint64
	// SeriesChangedSince names the series that may have changed since
	// generation gen; ok false when it cannot say.
	SeriesChangedSince(gen uint64) (keys []string, ok bool)
	// ListSeries lists every series that has a succeeded run.
	ListSeries(ctx context.Context) ([]rundoc.SeriesInfo, error)
	// SeriesInfos lists those of keys that have a succeeded run.
	SeriesInfos(ctx context.Context, keys []string) ([]rundoc.SeriesInfo, error)
}

// Cache keeps a V derived from each series. The zero value is empty and
// ready. It is not safe for concurrent use: its owner holds a lock
// around Update and the reads, which also makes concurrent requests
// after a write share one update instead of each repeating it.
type Cache[V any] struct {
	gen   uint64
	valid bool
	byKey map[string]entry[V]
	// lists counts the reads of every series (ListSeries), what an
	// update series by series avoids.
	lists int
}

type entry[V any] struct {
	sig   rundoc.SeriesInfo
	value V
}

// Update brings the cache up to src's series generation. When it is
// there already it reads nothing and returns false. Otherwise it reads
// the signatures of the series that may have changed (of every series
// when src cannot name them), calls derive once for the series whose
// signature changed (derive returns their values in the same order),
// drops the series that have no succeeded run any more, and returns
// true. An error leaves the cache as it was, still right for its
// generation.
func (c *Cache[V]) Update(ctx context.Context, src Source, derive func(ctx context.Context, todo []rundoc.SeriesInfo) ([]V, error)) (bool, error) {
	gen := src.SeriesGeneration()
	if c.valid && c.gen == gen {
		return false, nil
	}
	// changed is the keys of the series that may have changed since the
	// cache's generation, when the store knows them; list their
	// signatures now (those of the changed keys that still have
	// succeeded runs).
	var changed []string
	known := false
	if c.valid {
		changed, known = src.SeriesChangedSince(c.gen)
		known = known && len(changed) <= MaxChanged
	}
	var list []rundoc.SeriesInfo
	var err error
	if known {
		list, err = src.SeriesInfos(ctx, changed)
	} else {
		c.lists++
		list, err = src.ListSeries(ctx)
	}
	if err != nil {
		return false, err
	}
	next := make([]entry[V], len(list))
	var todo []rundoc.SeriesInfo
	var at []int
	for i, si := range list {
		if e, ok := c.byKey[si.Key]; ok && e.sig == si {
			next[i] = e
			continue
		}
		todo = append(todo, si)
		at = append(at, i)
	}
	if len(todo) > 0 {
		values, err := derive(ctx, todo)
		if err != nil {
			return false, err
		}
		for j, i := range at {
			next[i] = entry[V]{sig: list[i], value: values[j]}
		}
	}
	// Only now, all read, is the cache changed.
	byKey := c.byKey
	if known {
		// The changed series without succeeded runs are gone.
		for _, k := range changed {
			delete(byKey, k)
		}
	} else {
		byKey = make(map[string]entry[V], len(list))
	}
	for _, e := range next {
		byKey[e.sig.Key] = e
	}
	// What was read after gen was read holds every write up to it; a
	// write during the reads moved the generation past gen, and
	// SeriesChangedSince(gen) names its series next time (or says it
	// cannot), so they are read again then.
	c.byKey, c.gen, c.valid = byKey, gen, true
	return true, nil
}

// All yields each series' signature and value, in no order.
func (c *Cache[V]) All() iter.Seq2[rundoc.SeriesInfo, V] {
	return func(yield func(rundoc.SeriesInfo, V) bool) {
		for _, e := range c.byKey {
			if !yield(e.sig, e.value) {
				return
			}
		}
	}
}

// Len is the number of series kept.
func (c *Cache[V]) Len() int { return len(c.byKey) }

// Lists is how many times the cache read every series (ListSeries).
func (c *Cache[V]) Lists() int { return c.lists }
