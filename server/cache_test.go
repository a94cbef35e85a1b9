package server

import "testing"

func TestLRUEvictsLeastRecentlyUsed(t *testing.T) {
	c := newLRU[int, string](2)
	c.put(1, "a")
	c.put(2, "b")
	c.get(1) // 2 is now the least recently used
	c.put(3, "c")
	if _, ok := c.get(2); ok {
		t.Error("2 survived; it was the least recently used")
	}
	for _, k := range []int{1, 3} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%d was evicted", k)
		}
	}
	if c.len() != 2 {
		t.Errorf("len = %d, want 2", c.len())
	}
}
