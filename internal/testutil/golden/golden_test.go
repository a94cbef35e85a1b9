package golden

import "testing"

func TestFirstDiff(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		line      int
		g, w      string
		ok        bool
	}{
		{"a\nb\n", "a\nb\n", 0, "", "", true},
		{"a\nb\n", "a\nc\n", 2, "b", "c", false},
		{"a\nb\nextra", "a\nb", 3, "extra", "(end of file)", false},
		{"a", "a\nmore", 2, "(end of output)", "more", false},
		{"a\n", "a", 2, "", "(end of file)", false},
	} {
		line, g, w, ok := firstDiff(tc.got, tc.want)
		if line != tc.line || g != tc.g || w != tc.w || ok != tc.ok {
			t.Errorf("firstDiff(%q, %q) = %d %q %q %v, want %d %q %q %v", tc.got, tc.want, line, g, w, ok, tc.line, tc.g, tc.w, tc.ok)
		}
	}
}
