// Package suggest finds the nearest valid name for a misspelt one, the
// "did you mean" of every error message (scenario keys, built-in scenario
// names, units, GPU models). One rule everywhere, so that a typo is caught
// the same way whatever it names.
package suggest

import "strings"

// Distance is the optimal-string-alignment (restricted Damerau-
// Levenshtein) distance between a and b in runes: insertions, deletions,
// substitutions and swaps of two neighbouring runes each cost 1, so "nmae"
// is 1 away from "name" (plain Levenshtein would say 2).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	n, m := len(ra), len(rb)
	d := make([][]int, n+1)
	for i := range d {
		d[i] = make([]int, m+1)
		d[i][0] = i
	}
	for j := 0; j <= m; j++ {
		d[0][j] = j
	}
	for i := 1; i <= n; i++ {
		for j := 1; j <= m; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[n][m]
}

// Nearest returns the candidate closest to s (ignoring case) if it is close
// enough to be a plausible typo: within a third of the longer word, and at
// least 2 edits allowed, so "backgroud_load" finds "background_load" but
// "x" does not find "seed". It returns "" when none is that close. Ties go
// to the earlier candidate, so results do not depend on map order as long
// as the candidates are sorted.
func Nearest(s string, candidates []string) string {
	best, bestD := "", -1
	ls := strings.ToLower(s)
	for _, c := range candidates {
		d := Distance(ls, strings.ToLower(c))
		limit := max(2, max(len(s), len(c))/3)
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}
