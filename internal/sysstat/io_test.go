package sysstat

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const sampleIO = `rchar: 323934931
wchar: 323929600
syscr: 632687
syscw: 632675
read_bytes: 4096
write_bytes: 8192
cancelled_write_bytes: 512
`

func TestParseIO(t *testing.T) {
	full := IO{Rchar: 323934931, Wchar: 323929600, Syscr: 632687, Syscw: 632675,
		ReadBytes: 4096, WriteBytes: 8192, CancelledWriteBytes: 512}
	tests := []struct {
		name    string
		in      string
		want    IO
		wantErr string // substring; empty means success expected
	}{
		{name: "kernel format", in: sampleIO, want: full},
		{name: "no trailing newline", in: strings.TrimSuffix(sampleIO, "\n"), want: full},
		{name: "zeros", in: "rchar: 0\nwchar: 0\nsyscr: 0\nsyscw: 0\nread_bytes: 0\nwrite_bytes: 0\ncancelled_write_bytes: 0\n"},
		{name: "reordered", in: "syscw: 632675\ncancelled_write_bytes: 512\nrchar: 323934931\nwrite_bytes: 8192\nwchar: 323929600\nread_bytes: 4096\nsyscr: 632687\n", want: full},
		{name: "extra unknown fields ignored", in: "future_counter: 7\n" + sampleIO + "another: not-a-number\n", want: full},
		{name: "blank lines and CRLF", in: "\n" + strings.ReplaceAll(sampleIO, "\n", "\r\n") + "\n\n", want: full},
		{name: "tab and no space after colon", in: strings.Replace(strings.Replace(sampleIO, "rchar: ", "rchar:\t", 1), "wchar: ", "wchar:", 1), want: full},
		{name: "max int64", in: strings.Replace(sampleIO, "rchar: 323934931", "rchar: 9223372036854775807", 1),
			want: func() IO { v := full; v.Rchar = 1<<63 - 1; return v }()},

		{name: "empty", in: "", wantErr: "missing: rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes"},
		{name: "missing storage fields", in: "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n", wantErr: "missing: read_bytes, write_bytes, cancelled_write_bytes"},
		{name: "missing syscw", in: strings.Replace(sampleIO, "syscw: 632675\n", "", 1), wantErr: "missing: syscw"},
		{name: "duplicate", in: sampleIO + "syscw: 1\n", wantErr: "duplicate key"},
		{name: "garbage", in: "hello world\n", wantErr: "missing ':'"},
		{name: "binary garbage", in: "\x00\x01\x02\xff", wantErr: "missing ':'"},
		{name: "garbage after valid", in: sampleIO + "oops\n", wantErr: "line 8"},
		{name: "non-numeric value", in: strings.Replace(sampleIO, "syscr: 632687", "syscr: lots", 1), wantErr: `bad value for "syscr"`},
		{name: "empty value", in: strings.Replace(sampleIO, "syscr: 632687", "syscr:", 1), wantErr: `bad value for "syscr"`},
		{name: "negative", in: strings.Replace(sampleIO, "wchar: 323929600", "wchar: -5", 1), wantErr: `bad value for "wchar"`},
		{name: "plus sign", in: strings.Replace(sampleIO, "wchar: 323929600", "wchar: +5", 1), wantErr: `bad value for "wchar"`},
		{name: "hex", in: strings.Replace(sampleIO, "wchar: 323929600", "wchar: 0x10", 1), wantErr: `bad value for "wchar"`},
		{name: "two numbers", in: strings.Replace(sampleIO, "wchar: 323929600", "wchar: 1 2", 1), wantErr: `bad value for "wchar"`},
		{name: "overflow int64", in: strings.Replace(sampleIO, "rchar: 323934931", "rchar: 9223372036854775808", 1), wantErr: "out of range"},
		{name: "space in key", in: "r char: 1\n" + sampleIO, wantErr: "malformed key"},
		{name: "empty key", in: ": 1\n" + sampleIO, wantErr: "malformed key"},
		{name: "line too long", in: strings.Repeat("x", 70000) + ": 1\n" + sampleIO, wantErr: "too long"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseIO(strings.NewReader(tc.in))
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseIO succeeded with %+v, want error containing %q", got, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseIO error = %q, want it to contain %q", err, tc.wantErr)
				}
				if got != (IO{}) {
					t.Fatalf("ParseIO returned non-zero %+v together with an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseIO: %v", err)
			}
			if got != tc.want {
				t.Fatalf("ParseIO = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestIOSub(t *testing.T) {
	a := IO{10, 20, 30, 40, 50, 60, 70}
	b := IO{1, 2, 3, 4, 5, 6, 7}
	want := IO{9, 18, 27, 36, 45, 54, 63}
	if got := a.Sub(b); got != want {
		t.Fatalf("Sub = %+v, want %+v", got, want)
	}
	if got := a.Sub(a); got != (IO{}) {
		t.Fatalf("a.Sub(a) = %+v, want zero", got)
	}
}

// formatIO renders v in the /proc/<pid>/io format.
func formatIO(v IO) string {
	var b bytes.Buffer
	for _, f := range ioFields {
		fmt.Fprintf(&b, "%s: %d\n", f.key, *f.ptr(&v))
	}
	return b.String()
}

func FuzzParseIO(f *testing.F) {
	f.Add(sampleIO)
	f.Add("")
	f.Add("rchar: 1\n")
	f.Add("x: y\n" + sampleIO)
	f.Add(strings.ReplaceAll(sampleIO, "\n", "\r\n"))
	f.Add(strings.Replace(sampleIO, "rchar: 323934931", "rchar: 9223372036854775807", 1))
	f.Add(strings.Replace(sampleIO, "syscw: 632675", "syscw: -1", 1))
	f.Fuzz(func(t *testing.T, in string) {
		v, err := ParseIO(strings.NewReader(in))
		if err != nil {
			if v != (IO{}) {
				t.Fatalf("non-zero result %+v with error %v", v, err)
			}
			return
		}
		for _, f := range ioFields {
			if *f.ptr(&v) < 0 {
				t.Fatalf("accepted negative %s in %+v", f.key, v)
			}
		}
		out := formatIO(v)
		v2, err := ParseIO(strings.NewReader(out))
		if err != nil {
			t.Fatalf("re-parsing formatted %+v failed: %v\n%s", v, err, out)
		}
		if v2 != v {
			t.Fatalf("round trip changed value: %+v -> %+v", v, v2)
		}
		// Every accepted field must literally appear in the input as
		// "key:" followed by its decimal value.
		for _, f := range ioFields {
			if !strings.Contains(in, f.key+":") || !strings.Contains(in, fmt.Sprint(*f.ptr(&v))) {
				t.Fatalf("accepted %s=%d not present in input %q", f.key, *f.ptr(&v), in)
			}
		}
	})
}

func TestErrUnsupportedWrapsStdlib(t *testing.T) {
	if !errors.Is(ErrUnsupported, errors.ErrUnsupported) {
		t.Fatal("ErrUnsupported does not wrap errors.ErrUnsupported")
	}
	err := fmt.Errorf("%w: extra", ErrUnsupported)
	if !errors.Is(err, ErrUnsupported) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatal("wrapped ErrUnsupported not recognised")
	}
}
