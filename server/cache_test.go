package server

import (
	"fmt"
	"strings"
	"testing"
)

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

func TestCachedPagesFollowWritesAndCarryEachVisitorsToken(t *testing.T) {
	ts := newTestServer(t, nil)
	first := ts.do(t, "GET", "/", "")
	if strings.Contains(first.Body.String(), "cache-me") {
		t.Fatal("label present before the run exists")
	}
	id := ts.createRun(t, `{"workload":"producer","label":"cache-me","params":{"num-records":100,"profile":"none"}}`)
	if !strings.Contains(ts.do(t, "GET", "/", "").Body.String(), "cache-me") {
		t.Error("the runs page did not change after a run was created")
	}
	ts.waitFinal(t, id)
	page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "", "Cookie", csrfCookie+"="+strings.Repeat("a", 32))
	if !strings.Contains(page.Body.String(), "succeeded") {
		t.Error("the run page still shows the run before it finished")
	}
	other := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "", "Cookie", csrfCookie+"="+strings.Repeat("b", 32))
	for name, body := range map[string]string{"first": page.Body.String(), "second": other.Body.String()} {
		if strings.Contains(body, string(ts.csrfPlaceholder)) {
			t.Errorf("%s visitor sees the placeholder token", name)
		}
	}
	if !strings.Contains(page.Body.String(), strings.Repeat("a", 32)) || !strings.Contains(other.Body.String(), strings.Repeat("b", 32)) {
		t.Error("a cached page does not carry its visitor's own CSRF token")
	}
}
