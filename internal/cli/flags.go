// Package cli is the command line machinery of the rfm command: flag sets
// that group their flags into sections for the usage text, refuse a flag
// given twice and word the flag package's errors as one line naming the
// flag; the hyperparameter flags declared by rfm.Params; usage errors; the
// progress bar; and the parsers of sizes and delimiters.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm"
)

// UsageError is a mistake on the command line (exit code 2).
type UsageError struct{ Msg string }

// Error is the message.
func (u *UsageError) Error() string { return u.Msg }

// Usagef is a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Sprintf(format, args...)}
}

// EditDistance is the Levenshtein distance between a and b.
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// FlagSet is a flag.FlagSet that remembers the order and grouping of its
// flags for the usage text, and turns the standard library's parse errors
// into one-line messages that name the flag with the -- spelling.
type FlagSet struct {
	fs       *flag.FlagSet
	name     string // subcommand, e.g. "fit"
	synopsis string // "rfm fit --data FILE --target COL [flags]"
	about    string // what the command does, a paragraph
	example  string // one or more example command lines
	order    []string
	heading  map[string]string // flag name → section title printed before it
	section  string
	// Positional, when non-empty, names the one positional argument the
	// command accepts as a shorthand for a flag (e.g. "data").
	Positional string
}

// NewFlagSet starts the flags of the subcommand name: its synopsis line,
// what it does (a paragraph) and example command lines, for the usage text.
func NewFlagSet(name, synopsis, about, example string) *FlagSet {
	fs := flag.NewFlagSet("rfm "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &FlagSet{fs: fs, name: name, synopsis: synopsis, about: about, example: example, heading: map[string]string{}}
}

// Section starts a titled group of flags in the usage text.
func (f *FlagSet) Section(title string) { f.section = title }

func (f *FlagSet) add(name string) {
	// Every flag is given at most once, but lists, which accumulate.
	fl := f.fs.Lookup(name)
	_, list := fl.Value.(*List)
	fl.Value = &onceValue{Value: fl.Value, repeatable: list}
	if f.section != "" {
		f.heading[name] = f.section
		f.section = ""
	}
	f.order = append(f.order, name)
}

// define registers a flag through one of flag.FlagSet's typed XxxVar
// methods and records it for the usage text.
func define[T any](f *FlagSet, xxxVar func(*T, string, T, string), p *T, name string, def T, usage string) {
	xxxVar(p, name, def, usage)
	f.add(name)
}

// String adds a string flag; Bool, Int, Uint64 and Float the other
// types, in the standard library's spelling.
func (f *FlagSet) String(p *string, name, def, usage string) {
	define(f, f.fs.StringVar, p, name, def, usage)
}
func (f *FlagSet) Bool(p *bool, name string, def bool, usage string) {
	define(f, f.fs.BoolVar, p, name, def, usage)
}
func (f *FlagSet) Int(p *int, name string, def int, usage string) {
	define(f, f.fs.IntVar, p, name, def, usage)
}
func (f *FlagSet) Uint64(p *uint64, name string, def uint64, usage string) {
	define(f, f.fs.Uint64Var, p, name, def, usage)
}
func (f *FlagSet) Float(p *float64, name string, def float64, usage string) {
	define(f, f.fs.Float64Var, p, name, def, usage)
}

// List adds a list flag (comma-separated, may be repeated).
func (f *FlagSet) List(p *List, name, usage string) {
	f.fs.Var(p, name, usage)
	f.add(name)
}

// Param adds the flag of a declared hyperparameter, read into and
// defaulting from cfg; its help, with the range, is the declaration's.
func (f *FlagSet) Param(cfg *rfm.Config, p *rfm.Param) {
	f.fs.Var(&paramValue{cfg: cfg, p: p}, p.Name, p.Usage())
	f.add(p.Name)
}

// paramValue is the flag.Value of a declared hyperparameter: it parses
// the type only; the range is checked on the whole Config afterwards, so
// that a parameter the kernel does not use is reported as such.
type paramValue struct {
	cfg *rfm.Config
	p   *rfm.Param
}

func (v *paramValue) String() string {
	if v.cfg == nil { // the flag package's zero-value probe
		return ""
	}
	return fmt.Sprint(v.p.Get(v.cfg))
}

func (v *paramValue) Set(s string) error { return v.p.Set(v.cfg, s) }

func (v *paramValue) Get() any { return v.p.Get(v.cfg) }

func (v *paramValue) IsBoolFlag() bool { return v.p.Type == rfm.ParamBool }

// errTwice marks a flag given a second time.
var errTwice = errors.New("given twice")

// onceValue refuses a second value for a flag that is not a list: with the
// standard library, the last one would silently win.
type onceValue struct {
	flag.Value
	repeatable bool
	first      string // the first value given, for the message
	set        bool
}

func (o *onceValue) Set(s string) error {
	if o.set && !o.repeatable {
		return fmt.Errorf("%w (first %q)", errTwice, o.first)
	}
	o.set, o.first = true, s
	return o.Value.Set(s)
}

func (o *onceValue) IsBoolFlag() bool {
	b, ok := o.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (o *onceValue) Get() any {
	if g, ok := o.Value.(flag.Getter); ok {
		return g.Get()
	}
	return nil
}

// IsSet reports whether the flag was given on the command line.
func (f *FlagSet) IsSet(name string) bool {
	set := false
	f.fs.Visit(func(fl *flag.Flag) {
		if fl.Name == name {
			set = true
		}
	})
	return set
}

// Parse parses args. Flags and positional arguments may be interleaved
// ("rfm fit train.csv --target y"). It returns flag.ErrHelp after printing
// the usage text to w for -h/--help, and a usageError otherwise.
func (f *FlagSet) Parse(args []string, w io.Writer) (positional []string, err error) {
	for {
		if err := f.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.WriteUsage(w)
				return nil, flag.ErrHelp
			}
			return nil, &UsageError{f.rewrite(err)}
		}
		rest := f.fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > 0 && len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			// Everything after "--" is positional.
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// ParseFlags is Parse for commands that take no positional argument.
func (f *FlagSet) ParseFlags(args []string, w io.Writer) error {
	pos, err := f.Parse(args, w)
	if err == nil && len(pos) > 0 {
		return Usagef("unexpected argument %q", pos[0])
	}
	return err
}

// ParsePositional is Parse for commands that accept the value of one flag
// (f.Positional) as a bare argument.
func (f *FlagSet) ParsePositional(args []string, w io.Writer, target *string) error {
	pos, err := f.Parse(args, w)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return nil
	case f.Positional == "" || len(pos) > 1:
		return Usagef("unexpected argument %q", pos[len(pos)-1])
	case *target != "":
		return Usagef("both --%s and the argument %q given; use one", f.Positional, pos[0])
	}
	*target = pos[0]
	return nil
}

var (
	reInvalid  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-([^:]+): (.*)$`)
	reBoolFlag = regexp.MustCompile(`^invalid boolean flag ([^:]+): (.*)$`)
	reUndef    = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	reNeedsArg = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	reBadSyn   = regexp.MustCompile(`^bad flag syntax: (.*)$`)
)

// rewrite turns a flag package error into "--name value: problem".
func (f *FlagSet) rewrite(err error) string {
	msg := err.Error()
	if m := reInvalid.FindStringSubmatch(msg); m != nil {
		value, name, why := m[1], m[2], m[3]
		if first, ok := strings.CutPrefix(why, errTwice.Error()+" (first "); ok {
			return fmt.Sprintf("--%s given twice (%s, then %q); give it once", name, strings.TrimSuffix(first, ")"), value)
		}
		if fl := f.fs.Lookup(name); fl != nil && (why == "parse error" || strings.HasPrefix(why, "strconv.")) {
			why = "want " + kindOf(fl)
		}
		if why == "value out of range" {
			why = "out of range for " + kindOf(f.fs.Lookup(name))
		}
		return fmt.Sprintf("--%s %q: %s", name, value, why)
	}
	if m := reBoolFlag.FindStringSubmatch(msg); m != nil {
		if strings.HasPrefix(m[2], errTwice.Error()) {
			return fmt.Sprintf("--%s given twice; give it once", m[1])
		}
		return fmt.Sprintf("--%s: %s", m[1], m[2])
	}
	if m := reUndef.FindStringSubmatch(msg); m != nil {
		s := fmt.Sprintf("unknown flag --%s", m[1])
		if near := f.nearest(m[1]); near != "" {
			s += fmt.Sprintf("; did you mean --%s?", near)
		}
		return s
	}
	if m := reNeedsArg.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("flag --%s needs a value", m[1])
	}
	if m := reBadSyn.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("bad flag syntax %s", m[1])
	}
	return msg
}

func kindOf(fl *flag.Flag) string {
	if fl == nil {
		return "a value"
	}
	g, ok := fl.Value.(flag.Getter)
	if !ok || g.Get() == nil {
		return "a value"
	}
	switch reflect.TypeOf(g.Get()).Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float64:
		return "a number"
	}
	return "a value"
}

func (f *FlagSet) nearest(name string) string {
	best, bestD := "", 3
	for _, n := range f.order {
		if d := EditDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// WriteUsage prints the command's help: synopsis, description, flags by
// section with their defaults, and examples.
func (f *FlagSet) WriteUsage(w io.Writer) {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n", f.synopsis)
	if f.about != "" {
		b.WriteString(strings.TrimSpace(f.about))
		b.WriteString("\n")
	}
	type row struct{ left, right, heading string }
	var rows []row
	width := 0
	for _, name := range f.order {
		fl := f.fs.Lookup(name)
		valueName, usage := flag.UnquoteUsage(fl)
		left := "--" + name
		if valueName != "" {
			left += " " + valueName
		}
		if def := fl.DefValue; def != "" && def != "false" && def != "0" && def != "[]" {
			usage += fmt.Sprintf(" (default %s)", def)
		}
		rows = append(rows, row{left, usage, f.heading[name]})
		width = max(width, len(left))
	}
	if len(rows) > 0 && rows[0].heading == "" {
		b.WriteString("\nFlags:\n")
	}
	for _, r := range rows {
		if r.heading != "" {
			fmt.Fprintf(&b, "\n%s:\n", r.heading)
		}
		fmt.Fprintf(&b, "  %-*s  %s\n", width, r.left, r.right)
	}
	if f.example != "" {
		b.WriteString("\nExample:\n")
		for _, line := range strings.Split(strings.TrimSpace(f.example), "\n") {
			fmt.Fprintf(&b, "  %s\n", strings.TrimSpace(line))
		}
	}
	io.WriteString(w, b.String())
}

// List collects comma-separated values; the flag may also be repeated.
type List []string

// String, Set and Get make a List a flag.Getter.
func (l *List) String() string { return strings.Join(*l, ",") }

func (l *List) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

func (l *List) Get() any { return []string(*l) }

// CheckFinite reports a NaN or infinite float flag.
func CheckFinite(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Usagef("--%s %v: must be a finite number", name, v)
	}
	return nil
}

// ParseDelimiter reads --delimiter: one character, or "tab".
func ParseDelimiter(s string) (rune, error) {
	switch strings.ToLower(s) {
	case "":
		return 0, nil
	case "tab", `\t`:
		return '\t', nil
	case "comma":
		return ',', nil
	case "semicolon":
		return ';', nil
	case "pipe":
		return '|', nil
	case "space":
		return ' ', nil
	}
	r := []rune(s)
	if len(r) != 1 || r[0] == '"' || r[0] == '\n' || r[0] == '\r' {
		return 0, Usagef("--delimiter %q: want one character, or tab", s)
	}
	return r[0], nil
}

// ParseBytes reads a size such as 8G, 512MiB or 1e9 (bytes).
func ParseBytes(s string) (uint64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(t, "B")
	t = strings.TrimSuffix(t, "I")
	mult := 1.0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) || v*mult >= 1<<63 {
		return 0, fmt.Errorf("%q is not a size; write for example 8G, 512M or 0 for automatic", s)
	}
	return uint64(v * mult), nil
}

// ParseInts reads the integers of a list flag (--flag), each in [lo, hi]
// (hi ≤ 0: no upper bound); an empty list is def.
func ParseInts(flag string, items []string, def []int, lo, hi int) ([]int, error) {
	if len(items) == 0 {
		return def, nil
	}
	var out []int
	for _, s := range items {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		switch {
		case err == nil && v >= lo && (hi <= 0 || v <= hi):
			out = append(out, v)
		case hi <= 0:
			return nil, Usagef("--%s %q: want integers ≥ %d, comma-separated", flag, s, lo)
		default:
			return nil, Usagef("--%s %q: want integers in %d..%d", flag, s, lo, hi)
		}
	}
	return out, nil
}
