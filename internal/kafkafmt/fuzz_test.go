package kafkafmt

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
)

// refJavaDecimal is an independent, exact (math/big) version of the
// decimal Java's Double.toString selects for the finite a > 0: the
// shortest decimal that reads back as a, or, when that has one digit, the
// decimal of at most two digits closest to a.
func refJavaDecimal(a float64) *big.Rat {
	shortest := strconv.FormatFloat(a, 'e', -1, 64)
	r, ok := new(big.Rat).SetString(shortest)
	if !ok {
		panic("unparsable " + shortest)
	}
	mant, _, _ := strings.Cut(shortest, "e")
	if len(mant) > 1 {
		return r
	}
	exact := new(big.Rat).SetFloat64(a)
	// E with 10^E <= a < 10^(E+1).
	e := int(math.Floor(math.Log10(a)))
	for exact.Cmp(pow10Rat(e)) < 0 {
		e--
	}
	for exact.Cmp(pow10Rat(e+1)) >= 0 {
		e++
	}
	// Two-digit decimals c × 10^(E-1) around a, 10 <= c <= 100.
	unit := pow10Rat(e - 1)
	scaled := new(big.Rat).Quo(exact, unit)
	lo := new(big.Int).Quo(scaled.Num(), scaled.Denom())
	hi := new(big.Int).Add(lo, big.NewInt(1))
	loV := new(big.Rat).Mul(new(big.Rat).SetInt(lo), unit)
	hiV := new(big.Rat).Mul(new(big.Rat).SetInt(hi), unit)
	dLo := new(big.Rat).Sub(exact, loV)
	dHi := new(big.Rat).Sub(hiV, exact)
	best := loV
	switch c := dLo.Cmp(dHi); {
	case c > 0:
		best = hiV
	case c == 0 && lo.Bit(0) == 1:
		best = hiV
	}
	if f, _ := best.Float64(); f != a {
		panic("two-digit decimal does not round-trip for " + shortest)
	}
	return best
}

func pow10Rat(e int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(max(e, -e))), nil)
	if e >= 0 {
		return new(big.Rat).SetInt(p)
	}
	return new(big.Rat).SetFrac(big.NewInt(1), p)
}

// refJavaFixed rounds refJavaDecimal(|v|) half-up to prec fractional
// digits with exact rational arithmetic: floor(d × 10^prec + 1/2).
func refJavaFixed(v float64, prec int) string {
	if prec < 0 {
		prec = 6
	}
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	sign := ""
	if math.Signbit(v) {
		sign = "-"
	}
	d := new(big.Rat)
	if a := math.Abs(v); a != 0 {
		d = refJavaDecimal(a)
	}
	x := new(big.Rat).Mul(d, pow10Rat(prec))
	x.Add(x, big.NewRat(1, 2))
	q := new(big.Int).Quo(x.Num(), x.Denom()) // x > 0, so this is floor
	s := q.String()
	if len(s) <= prec {
		s = strings.Repeat("0", prec+1-len(s)) + s
	}
	if prec == 0 {
		return sign + s
	}
	return sign + s[:len(s)-prec] + "." + s[len(s)-prec:]
}

func FuzzJavaFixed(f *testing.F) {
	seeds := []struct {
		v    float64
		prec int
	}{
		{0.125, 2}, {2.675, 2}, {2.5, 0}, {1e-7, 6}, {-0.0001, 2}, {9.995, 2},
		{math.MaxFloat64, 3}, {5e-324, 325}, {1e-323, 330}, {1e23, 1},
		{math.NaN(), 1}, {math.Inf(-1), 4}, {math.Copysign(0, -1), 2}, {123456.789, -1},
	}
	for _, s := range seeds {
		f.Add(math.Float64bits(s.v), s.prec)
	}
	f.Fuzz(func(t *testing.T, bits uint64, prec int) {
		// Keep the precision where math/big stays quick; Java accepts any
		// non-negative precision, and -1 stands for Java's default.
		if prec < -1 || prec > 400 {
			prec = int(uint(prec)%402) - 1
		}
		v := math.Float64frombits(bits)
		got := JavaFixed(v, prec)
		if want := refJavaFixed(v, prec); got != want {
			t.Errorf("JavaFixed(%v [%#x], %d) = %q, want %q", v, bits, prec, got, want)
		}
	})
}

// TestJavaFixedTinySubnormals runs the reference over the smallest
// subnormals, where Java's two-digit rule picks a decimal other than the
// shortest (4.9E-324 for Double.MIN_VALUE, 9.9E-324 for twice it).
func TestJavaFixedTinySubnormals(t *testing.T) {
	for bits := uint64(1); bits <= 2048; bits++ {
		v := math.Float64frombits(bits)
		for _, prec := range []int{323, 324, 325, 326, 340} {
			if got, want := JavaFixed(v, prec), refJavaFixed(v, prec); got != want {
				t.Fatalf("JavaFixed(%v [%#x], %d) = %q, want %q", v, bits, prec, got, want)
			}
		}
	}
}
