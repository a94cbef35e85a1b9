package server

import (
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
)

// newLRU returns a least-recently-used cache of at most size entries,
// safe for concurrent use (hashicorp/golang-lru). It bounds memory for
// things that are costly to rebuild but immutable once built, like parsed
// stored profiles and rendered pages.
func newLRU[K comparable, V any](size int) *lru.Cache[K, V] {
	c, err := lru.New[K, V](size)
	if err != nil {
		// lru.New fails only for a size below 1: the sizes are constants.
		panic(fmt.Sprintf("server: cache of %d entries: %v", size, err))
	}
	return c
}
