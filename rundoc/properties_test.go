package rundoc

import (
	"reflect"
	"testing"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]string
	}{
		{"a=1\nb = 2\n", map[string]string{"a": "1", "b": "2"}},
		{"# comment\n! also\n\n  key:value\n", map[string]string{"key": "value"}},
		{"key value with spaces", map[string]string{"key": "value with spaces"}},
		{"sasl.jaas.config=org.Plain required \\\n    username=\"u\" \\\n    password=\"p\";\n",
			map[string]string{"sasl.jaas.config": `org.Plain required username="u" password="p";`}},
		{`a\=b=c`, map[string]string{"a=b": "c"}},
		{"empty=", map[string]string{"empty": ""}},
		{"bare", map[string]string{"bare": ""}},
	}
	for _, tt := range tests {
		got, err := ParseProperties(tt.in)
		if err != nil {
			t.Errorf("ParseProperties(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseProperties(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzParseProperties(f *testing.F) {
	for _, s := range []string{"a=1\nb:2", "k v", "x=\\\ny", "#c\n!d\n=", `a\=b=c\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		props, err := ParseProperties(in)
		if err != nil {
			return
		}
		for k := range props {
			if k == "" {
				t.Fatalf("empty key from %q", in)
			}
		}
	})
}
