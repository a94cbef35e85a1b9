// format.js: the pages' one number formatter, window.kbenchFormat. It
// follows the Go package internal/numfmt rule for rule and digit for
// digit: the end-to-end test TestE2EFormatMatchesGo runs every case of
// internal/numfmt/testdata/js_cases.json (written from the Go code)
// through these functions. Change both or neither.
//
//   number(v)                 numfmt.Number: "1,234,568", "4.12", "0.0123"
//   bytes(v)                  numfmt.Bytes: "512 B", "1.5 MiB"
//   percent(p)                numfmt.Percent (p in percent): "12.3%", "<0.1%"
//   signedPercent(p)          numfmt.SignedPercent: "+12.3%"
//   profileValue(v, unit)     numfmt.ProfileValue: "12.35 ms", "1.5 MiB"
//   signedProfileValue(v, u)  numfmt.SignedProfileValue: "+12.35 ms"
//   duration(ns)              numfmt.Duration: "850 ms", "1m 05s"
//
// Go's strconv rounds the exact binary value half to even; toFixed and
// toLocaleString round halves up. So decimals come from fixed(), which
// rounds the exact decimal expansion as strconv does.
(function () {
  'use strict';

  var HYPHEN = '-';

  function finite(v) { return typeof v === 'number' && isFinite(v); }

  // expansion returns the exact decimal digits of a finite a >= 0 as
  // [integer part, fraction without trailing zeros].
  function expansion(a) {
    if (a >= 1e21) { return [BigInt(a).toString(), '']; } // a whole number
    // toFixed is exact up to 100 decimals, which every float from 2^-47
    // on needs at most; smaller ones cannot sit on a rounding edge.
    var s = a.toFixed(100), dot = s.indexOf('.');
    return [s.slice(0, dot), s.slice(dot + 1).replace(/0+$/, '')];
  }

  // increment adds one to a string of decimal digits.
  function increment(ds) {
    var out = ds.split(''), i = out.length - 1;
    for (; i >= 0; i--) {
      if (out[i] === '9') { out[i] = '0'; } else { out[i] = String.fromCharCode(out[i].charCodeAt(0) + 1); break; }
    }
    return (i < 0 ? '1' : '') + out.join('');
  }

  // fixed is strconv.FormatFloat(v, 'f', d, 64) for a finite v.
  function fixed(v, d) {
    var neg = v < 0 || (v === 0 && 1 / v < 0);
    var e = expansion(Math.abs(v)), frac = e[1];
    while (frac.length < d) { frac += '0'; }
    var keep = e[0] + frac.slice(0, d), rest = frac.slice(d);
    if (rest !== '' && (rest[0] > '5' || (rest[0] === '5' &&
        (/[1-9]/.test(rest.slice(1)) || (keep.charCodeAt(keep.length - 1) - 48) % 2 === 1)))) {
      keep = increment(keep);
    }
    var n = keep.length - d;
    var s = d > 0 ? keep.slice(0, n) + '.' + keep.slice(n) : keep;
    return (neg ? '-' : '') + s;
  }

  // general is strconv.FormatFloat(v, 'g', 3, 64) for the tiny positive
  // values number() shows in exponent notation: "1.5e-09".
  function general(v) {
    var m = /^(\d(?:\.\d*)?)e([+-])(\d+)$/.exec(v.toExponential(2));
    var mant = m[1].indexOf('.') >= 0 ? m[1].replace(/\.?0+$/, '') : m[1];
    return mant + 'e' + m[2] + (m[3].length < 2 ? '0' + m[3] : m[3]);
  }

  // group puts commas into the integer part of a decimal number;
  // anything else comes back unchanged.
  function group(s) {
    var sign = '';
    if (s.charAt(0) === '-') { sign = '-'; s = s.slice(1); }
    var dot = s.indexOf('.');
    var ip = dot < 0 ? s : s.slice(0, dot), rest = dot < 0 ? '' : s.slice(dot);
    if (!/^\d+$/.test(ip)) { return sign + s; }
    var out = '';
    for (var i = 0; i < ip.length; i++) {
      if (i > 0 && (ip.length - i) % 3 === 0) { out += ','; }
      out += ip.charAt(i);
    }
    return sign + out + rest;
  }

  var MAX_NEG_POW10 = 330;
  var negPow10 = [];
  for (var k = 0; k <= MAX_NEG_POW10; k++) { negPow10.push(Number('1e-' + k)); }

  // leadingZeros is k with 10^-k <= v < 10^-(k-1) for 0 < v < 1, by exact
  // comparisons as in Go (a logarithm is only the first guess).
  function leadingZeros(v) {
    var k = Math.min(Math.max(-Math.floor(Math.log10(v)), 1), MAX_NEG_POW10);
    while (k > 1 && v >= negPow10[k - 1]) { k--; }
    while (k < MAX_NEG_POW10 && v < negPow10[k]) { k++; }
    return k;
  }

  function decimals(v) {
    if (v >= 1000) { return 0; }
    if (v >= 100) { return 1; }
    if (v >= 1) { return 2; }
    return 2 + leadingZeros(v);
  }

  function number(v) {
    if (typeof v !== 'number' || isNaN(v)) { return 'NaN'; }
    if (v === Infinity) { return '∞'; }
    if (v === -Infinity) { return HYPHEN + '∞'; }
    if (v === 0) { return '0'; }
    if (v < 0) {
      var s = number(-v);
      return s === '0' ? s : HYPHEN + s;
    }
    if (v === Math.trunc(v) && v < 1e15) { return group(fixed(v, 0)); }
    if (v < 1e-6) { return general(v); }
    var d = decimals(v), out = fixed(v, d), r = parseFloat(out);
    if (r !== 0) {
      var d2 = decimals(r);
      if (d2 < d) { out = fixed(r, d2); }
    }
    return group(out);
  }

  var BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

  function bytes(v) {
    if (!finite(v)) { return number(v); }
    var sign = v < 0 ? HYPHEN : '';
    v = Math.abs(v);
    if (v < 1024) { return sign + fixed(v, v === Math.trunc(v) ? 0 : 1) + ' B'; }
    var unit = '';
    for (var i = 0; i < BYTE_UNITS.length; i++) {
      v /= 1024;
      unit = BYTE_UNITS[i];
      if (Math.round(v * 10) / 10 < 1024) { break; }
    }
    return sign + group(fixed(v, 1)) + ' ' + unit;
  }

  var TIME_UNITS = { nanoseconds: 1, ns: 1, microseconds: 1e3, us: 1e3, milliseconds: 1e6, ms: 1e6, seconds: 1e9, s: 1e9 };

  function profileValue(v, unit) {
    if (!finite(v)) { return number(v); }
    if (Object.prototype.hasOwnProperty.call(TIME_UNITS, unit)) {
      var ns = v * TIME_UNITS[unit], a = Math.abs(ns);
      if (a >= 1e9) { return number(ns / 1e9) + ' s'; }
      if (a >= 1e6) { return number(ns / 1e6) + ' ms'; }
      if (a >= 1e3) { return number(ns / 1e3) + ' µs'; }
      return number(ns) + ' ns';
    }
    if (unit === 'bytes' || unit === 'B') { return bytes(v); }
    if (!unit || unit === 'count') { return number(v); }
    return number(v) + ' ' + unit;
  }

  function signedProfileValue(v, unit) { return (v > 0 ? '+' : '') + profileValue(v, unit); }

  function percent(p) {
    if (!finite(p)) { return '—'; }
    if (p === 0) { return '0%'; }
    if (Math.abs(p) < 0.05) { return p < 0 ? '>-0.1%' : '<0.1%'; }
    return group(fixed(p, 1)) + '%';
  }

  function signedPercent(p) { return (p > 0 && p !== Infinity ? '+' : '') + percent(p); }

  function pad2(n) { return n < 10 ? '0' + n : String(n); }

  // roundTo is Go's time.Duration.Round for d >= 0 (halves up), exact for
  // whole nanoseconds below 2^53.
  function roundTo(d, m) {
    var r = d % m;
    return r + r < m ? d - r : d - r + m;
  }

  // duration takes whole nanoseconds (others are truncated, as Go's
  // conversion to time.Duration does); not a finite number reads "—".
  function duration(ns) {
    if (!finite(ns)) { return '—'; }
    var d = Math.trunc(ns);
    if (d < 0) { return HYPHEN + duration(-d); }
    if (d === 0) { return '0 s'; }
    if (d < 1e6) { return Math.floor(d / 1e3) + ' µs'; }
    if (d < 1e9) { return Math.floor(d / 1e6) + ' ms'; }
    var r = roundTo(d, 1e8);
    // As Go's Duration.Seconds: whole seconds plus the fraction.
    if (r < 60e9) { return fixed(Math.floor(r / 1e9) + (r % 1e9) / 1e9, 1) + ' s'; }
    var s = roundTo(d, 1e9) / 1e9;
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    if (h > 0) { return h + 'h ' + pad2(m) + 'm ' + pad2(sec) + 's'; }
    return m + 'm ' + pad2(sec) + 's';
  }

  window.kbenchFormat = Object.freeze({
    number: number,
    bytes: bytes,
    percent: percent,
    signedPercent: signedPercent,
    profileValue: profileValue,
    signedProfileValue: signedProfileValue,
    duration: duration
  });
})();
