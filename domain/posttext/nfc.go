package posttext

import "sort"

//go:generate go run gen_nfc.go

// cccRange is a run of runes sharing a canonical combining class.
type cccRange struct {
	lo, hi rune
	ccc    uint8
}

// Hangul syllables decompose and compose algorithmically (Unicode 3.12).
const (
	hangulBase  = 0xAC00
	hangulLBase = 0x1100
	hangulVBase = 0x1161
	hangulTBase = 0x11A7
	hangulL     = 19
	hangulV     = 21
	hangulT     = 28
	hangulCount = hangulL * hangulV * hangulT
)

// nfc returns s in Unicode Normalization Form C: canonical decomposition,
// canonical ordering of combining marks, canonical composition. The
// tables come from nfc_tables.go; text below U+0300 is already NFC.
func nfc(s string) string {
	if isBelowCombining(s) {
		return s
	}
	return string(compose(reorder(decompose(s))))
}

func isBelowCombining(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xCC { // lead byte of U+0300 and above
			return false
		}
	}
	return true
}

func decompose(s string) []rune {
	out := make([]rune, 0, len(s))
	for _, c := range s {
		switch {
		case c >= hangulBase && c < hangulBase+hangulCount:
			out = appendHangul(out, c-hangulBase)
		case nfcDecompositions[c] != "":
			out = append(out, []rune(nfcDecompositions[c])...)
		default:
			out = append(out, c)
		}
	}
	return out
}

func appendHangul(out []rune, i rune) []rune {
	out = append(out, hangulLBase+i/(hangulV*hangulT), hangulVBase+i%(hangulV*hangulT)/hangulT)
	if t := i % hangulT; t != 0 {
		out = append(out, hangulTBase+t)
	}
	return out
}

// reorder sorts each run of non-starters by combining class (stable).
func reorder(rs []rune) []rune {
	for i := 0; i < len(rs); {
		if combiningClass(rs[i]) == 0 {
			i++
			continue
		}
		j := i
		for j < len(rs) && combiningClass(rs[j]) != 0 {
			j++
		}
		run := rs[i:j]
		sort.SliceStable(run, func(a, b int) bool { return combiningClass(run[a]) < combiningClass(run[b]) })
		i = j
	}
	return rs
}

// compose joins each starter with the following unblocked characters it
// has a primary composite with.
func compose(rs []rune) []rune {
	out := rs[:0]
	starter := -1
	for _, c := range rs {
		cc := combiningClass(c)
		if starter >= 0 && unblocked(out, starter, cc) {
			if composite, ok := composePair(out[starter], c); ok {
				out[starter] = composite
				continue
			}
		}
		if cc == 0 {
			starter = len(out)
		}
		out = append(out, c)
	}
	return out
}

// unblocked reports whether a character of class cc appended to out can
// combine with out[starter]: nothing in between, or the last character
// in between has a lower, non-zero class (the run is canonically ordered).
func unblocked(out []rune, starter int, cc uint8) bool {
	last := len(out) - 1
	if last == starter {
		return true
	}
	lc := combiningClass(out[last])
	return lc != 0 && lc < cc
}

func composePair(a, b rune) (rune, bool) {
	switch {
	case a >= hangulLBase && a < hangulLBase+hangulL && b >= hangulVBase && b < hangulVBase+hangulV:
		return hangulBase + ((a-hangulLBase)*hangulV+b-hangulVBase)*hangulT, true
	case a >= hangulBase && a < hangulBase+hangulCount && (a-hangulBase)%hangulT == 0 &&
		b > hangulTBase && b < hangulTBase+hangulT:
		return a + b - hangulTBase, true
	}
	c, ok := nfcCompositions[[2]rune{a, b}]
	return c, ok
}

func combiningClass(c rune) uint8 {
	if c < 0x300 {
		return 0
	}
	i := sort.Search(len(nfcClasses), func(i int) bool { return nfcClasses[i].hi >= c })
	if i < len(nfcClasses) && nfcClasses[i].lo <= c {
		return nfcClasses[i].ccc
	}
	return 0
}

// NFC returns s in Unicode Normalization Form C, as every term of a post is
// compared (domain/streamrules tokenizes post text with it).
func NFC(s string) string { return nfc(s) }
