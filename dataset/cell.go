package dataset

import (
	"math"
	"strconv"
	"strings"
)

// cellClass is what a text cell turned out to be when parsed as a number.
type cellClass uint8

const (
	cellNumber    cellClass = iota // a finite float64
	cellText                       // not a number: the column is categorical
	cellNonFinite                  // inf, infinity or nan spelled out
	cellOverflow                   // a well-formed literal beyond ±MaxFloat64
)

// parseCell parses one trimmed, non-missing cell. Only plain decimal
// literals count as numbers: strconv.ParseFloat also accepts hex floats and
// digit separators ("0x1p3", "1_0"), which in a data file are far more likely
// to be identifiers than numbers.
func parseCell(s string) (float64, cellClass) {
	if s == "" {
		return 0, cellText
	}
	if v, ok := parseSimpleDecimal(s); ok {
		return v, cellNumber
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == '-', c == '+', c == 'e', c == 'E':
		default:
			if isNonFiniteWord(s) {
				return 0, cellNonFinite
			}
			return 0, cellText
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if math.IsInf(v, 0) { // ErrRange: magnitude too large
			return 0, cellOverflow
		}
		return 0, cellText
	}
	return v, cellNumber
}

// pow10 holds the powers of ten that are exact in float64.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseSimpleDecimal is a fast path for the common short decimal literals
// (Clinger's): when the digits form an integer m ≤ 2^53 and the decimal
// exponent e has |e| ≤ 22, both m and 10^|e| are exact float64 values, so
// one multiplication or division rounds m·10^e correctly, exactly as
// strconv.ParseFloat would. Anything else reports ok=false.
func parseSimpleDecimal(s string) (float64, bool) {
	i, neg := 0, false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		i++
	}
	var mant uint64
	exp, digits, dot := 0, false, false
	for ; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			digits = true
			if mant > (1<<53)/10 {
				return 0, false
			}
			mant = mant*10 + uint64(c-'0')
			if dot {
				exp--
			}
			continue
		}
		if c == '.' && !dot {
			dot = true
			continue
		}
		break
	}
	if !digits || mant > 1<<53 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		e, edigits := 0, false
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			if e > 1000 {
				return 0, false
			}
			e = e*10 + int(s[i]-'0')
			edigits = true
		}
		if !edigits {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != len(s) || exp < -22 || exp > 22 {
		return 0, false
	}
	v := float64(mant)
	if exp < 0 {
		v /= pow10[-exp]
	} else {
		v *= pow10[exp]
	}
	if neg {
		v = -v
	}
	return v, true
}

func isNonFiniteWord(s string) bool {
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	return strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity") || strings.EqualFold(s, "nan")
}

// numberError explains why a non-missing cell of a numeric column was rejected.
func numberError(s string, cls cellClass) string {
	switch cls {
	case cellOverflow:
		return quoteCell(s) + " overflows float64"
	case cellNonFinite:
		return quoteCell(s) + " is not a finite number; use a finite value or mark the cell missing (for example NA)"
	}
	return quoteCell(s) + " is not a number"
}

// DefaultMissingTokens returns the cell texts read as missing when
// ReadOptions.MissingTokens is empty.
func DefaultMissingTokens() []string {
	return []string{"", "NA", "N/A", "NaN", "nan", "null", "NULL", "?"}
}

// missingSet answers "is this trimmed cell missing?". An empty cell is
// always missing, whatever the tokens. The first-byte table keeps the map
// lookup off the hot path: most cells (numbers) cannot be tokens.
type missingSet struct {
	tokens map[string]struct{}
	first  [256]bool
}

func newMissingSet(tokens []string) *missingSet {
	if len(tokens) == 0 {
		tokens = DefaultMissingTokens()
	}
	m := &missingSet{tokens: make(map[string]struct{}, len(tokens))}
	for _, t := range tokens {
		t = strings.TrimSpace(t)
		if t != "" {
			m.tokens[t] = struct{}{}
			m.first[t[0]] = true
		}
	}
	return m
}

func (m *missingSet) has(s string) bool {
	if s == "" {
		return true
	}
	if !m.first[s[0]] {
		return false
	}
	_, ok := m.tokens[s]
	return ok
}

// textColumn is a column of cell texts from a text reader, read through
// cell (trimmed by the caller) so readers need not materialize every cell.
type textColumn struct {
	name  string
	field int // 1-based position in the file
	n     int
	cell  func(i int) string
}

// forced says how a column's kind is chosen.
type forced int8

const (
	inferKind forced = iota
	forceNumeric
	forceCategorical
)

// buildColumn types a text column: numeric when every non-missing cell is a
// number (or when forced), categorical otherwise (or when forced). On error
// the returned row is the offending row, so the caller can report the
// earliest problem in the file.
func buildColumn(tc textColumn, force forced, ms *missingSet, source string, lines []int) (*Column, int, *ParseError) {
	col := &Column{Name: tc.name, source: source, lines: lines, field: tc.field, Missing: make([]bool, tc.n)}
	if force == forceCategorical {
		return col.fillText(tc, ms), -1, nil
	}
	num := make([]float64, tc.n)
	bad, badCls, badText := -1, cellNumber, ""
	for i := range num {
		s := tc.cell(i)
		if ms.has(s) {
			col.Missing[i] = true
			num[i] = math.NaN()
			continue
		}
		v, cls := parseCell(s)
		switch cls {
		case cellNumber:
			num[i] = v
		case cellText:
			if force == forceNumeric {
				return nil, i, col.cellError(i, "%s", numberError(s, cls))
			}
			return col.fillText(tc, ms), -1, nil
		default:
			if bad < 0 {
				bad, badCls, badText = i, cls, s
			}
		}
	}
	if bad >= 0 {
		return nil, bad, col.cellError(bad, "%s", numberError(badText, badCls))
	}
	col.Kind = Numeric
	col.Num = num
	return col, -1, nil
}

// maxInterned bounds the per-column table used to share level strings.
const maxInterned = 1 << 16

// fillText makes col categorical. Each cell is copied (shared between equal
// cells) so the column does not pin the reader's whole input in memory.
func (c *Column) fillText(tc textColumn, ms *missingSet) *Column {
	c.Kind = Categorical
	c.Num = nil
	c.Str = make([]string, tc.n)
	intern := map[string]string{}
	for i := range c.Str {
		s := tc.cell(i)
		if ms.has(s) {
			c.Missing[i] = true
			continue
		}
		c.Missing[i] = false
		if v, ok := intern[s]; ok {
			c.Str[i] = v
			continue
		}
		v := strings.Clone(s)
		if len(intern) < maxInterned {
			intern[v] = v
		}
		c.Str[i] = v
	}
	return c
}
