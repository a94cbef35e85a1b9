package rundoc

import "testing"

func TestJoinIDs(t *testing.T) {
	for _, c := range []struct {
		ids  []uint
		want string
	}{{nil, ""}, {[]uint{7}, "7"}, {[]uint{3, 4, 5}, "3,4,5"}, {[]uint{4294967295, 0}, "4294967295,0"}} {
		if got := JoinIDs(c.ids); got != c.want {
			t.Errorf("JoinIDs(%v) = %q, want %q", c.ids, got, c.want)
		}
	}
}
