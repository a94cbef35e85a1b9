// Command v2gen writes the reference encodings of internal/hdr's tests
// with an independent encoder, the hdrhistogram-go module (v1.4.0). It is
// its own module under testdata, so kbench's build never links it; it was
// run once:
//
//	cd internal/hdr && go test -run TestEncodeMatchesHdrHistogramGo -write-cases
//	cd testdata/v2gen && go run . < ../kbench-v2-cases.txt > ../hdrhistogram-go-v1.4.0-v2.txt
//
// Each input line is "CASE<TAB>COUNT<TAB>BASE64", kbench's encoding of a
// test case. The module decodes it (so it reads kbench's encoding), checks
// the count, and writes "CASE<TAB>COUNT<TAB>BASE64" with its own encoding
// of what it decoded, which the test decodes with kbench's decoder.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<22)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for n := 1; in.Scan(); n++ {
		name, rest, ok1 := strings.Cut(in.Text(), "\t")
		count, enc, ok2 := strings.Cut(rest, "\t")
		want, err := strconv.ParseInt(count, 10, 64)
		if !ok1 || !ok2 || err != nil {
			fail("line %d: want CASE<TAB>COUNT<TAB>BASE64", n)
		}
		h, err := hdrhistogram.Decode([]byte(enc))
		if err != nil {
			fail("%s: hdrhistogram-go cannot decode kbench's encoding: %v", name, err)
		}
		if h.TotalCount() != want {
			fail("%s: hdrhistogram-go read %d values from kbench's encoding, want %d", name, h.TotalCount(), want)
		}
		again, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			fail("%s: encode: %v", name, err)
		}
		fmt.Fprintf(out, "%s\t%d\t%s\n", name, h.TotalCount(), again)
	}
	if err := in.Err(); err != nil {
		fail("read: %v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "v2gen: "+format+"\n", args...)
	os.Exit(1)
}
