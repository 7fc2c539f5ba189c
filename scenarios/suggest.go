package scenarios

import "strings"

// osaDistance is the optimal-string-alignment (restricted Damerau-
// Levenshtein) distance: insertions, deletions, substitutions and swaps of
// two neighbouring runes each cost 1, so "nmae" is 1 away from "name".
func osaDistance(a, b string) int {
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

// nearest returns the candidate closest to s if it is close enough to be a
// plausible typo: within a third of the longer word, and at least 2 edits
// allowed, so "backgroud_load" finds "background_load" but "x" does not
// find "seed". Ties go to the earlier candidate, so results do not depend on
// map order as long as the candidates are sorted.
func nearest(s string, candidates []string) string {
	best, bestD := "", -1
	ls := strings.ToLower(s)
	for _, c := range candidates {
		d := osaDistance(ls, strings.ToLower(c))
		limit := max(2, max(len(s), len(c))/3)
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}
