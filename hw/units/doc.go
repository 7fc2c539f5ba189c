// Package units provides typed quantities with units for scenario files
// (Duration, Bandwidth, Bytes, Fraction, Ratio, Power, Money, Frequency,
// Rate): strict parsers that reject a missing or unknown unit, negative
// values, NaN and infinity, and a canonical text form that parses back to
// exactly the same value.
//
// Every quantity holds its value in SI base units (nanoseconds as
// engine.Time, bytes, bytes per second, watts, US dollars, hertz, events per
// second). Parsing is exact: the number is read as a rational, multiplied by
// the unit's exact scale and only then rounded once to the nearest float64
// or checked to be an integer, so "12.5GiB/s" is exactly 13421772800 B/s
// and "1.3us" exactly 1300 ns.
package units
