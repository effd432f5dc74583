package main

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

// flagSet is a flag.FlagSet that remembers the order and grouping of its
// flags for the usage text, and turns the standard library's parse errors
// into one-line messages that name the flag with the -- spelling.
type flagSet struct {
	fs       *flag.FlagSet
	name     string // subcommand, e.g. "fit"
	synopsis string // "rfm fit --data FILE --target COL [flags]"
	about    string // what the command does, a paragraph
	example  string // one or more example command lines
	order    []string
	heading  map[string]string // flag name → section title printed before it
	section  string
	// positional, when non-empty, names the one positional argument the
	// command accepts as a shorthand for a flag (e.g. "data").
	positional string
}

func newFlagSet(name, synopsis, about, example string) *flagSet {
	fs := flag.NewFlagSet("rfm "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{fs: fs, name: name, synopsis: synopsis, about: about, example: example, heading: map[string]string{}}
}

// Section starts a titled group of flags in the usage text.
func (f *flagSet) Section(title string) { f.section = title }

func (f *flagSet) add(name string) {
	// Every flag is given at most once, but lists, which accumulate.
	fl := f.fs.Lookup(name)
	_, list := fl.Value.(*listFlag)
	fl.Value = &onceValue{Value: fl.Value, repeatable: list}
	if f.section != "" {
		f.heading[name] = f.section
		f.section = ""
	}
	f.order = append(f.order, name)
}

// define registers a flag through one of flag.FlagSet's typed XxxVar
// methods and records it for the usage text.
func define[T any](f *flagSet, xxxVar func(*T, string, T, string), p *T, name string, def T, usage string) {
	xxxVar(p, name, def, usage)
	f.add(name)
}

// The typed flags, in the standard library's spelling.
func (f *flagSet) String(p *string, name, def, usage string) {
	define(f, f.fs.StringVar, p, name, def, usage)
}
func (f *flagSet) Bool(p *bool, name string, def bool, usage string) {
	define(f, f.fs.BoolVar, p, name, def, usage)
}
func (f *flagSet) Int(p *int, name string, def int, usage string) {
	define(f, f.fs.IntVar, p, name, def, usage)
}
func (f *flagSet) Uint64(p *uint64, name string, def uint64, usage string) {
	define(f, f.fs.Uint64Var, p, name, def, usage)
}
func (f *flagSet) Float(p *float64, name string, def float64, usage string) {
	define(f, f.fs.Float64Var, p, name, def, usage)
}

func (f *flagSet) List(p *listFlag, name, usage string) {
	f.fs.Var(p, name, usage)
	f.add(name)
}

// Param adds the flag of a declared hyperparameter, read into and
// defaulting from cfg; its help, with the range, is the declaration's.
func (f *flagSet) Param(cfg *rfm.Config, p *rfm.Param) {
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
func (f *flagSet) IsSet(name string) bool {
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
func (f *flagSet) Parse(args []string, w io.Writer) (positional []string, err error) {
	for {
		if err := f.fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.WriteUsage(w)
				return nil, flag.ErrHelp
			}
			return nil, &usageError{f.rewrite(err)}
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

// ParsePositional is Parse for commands that accept the value of one flag
// (f.positional) as a bare argument.
func (f *flagSet) ParsePositional(args []string, w io.Writer, target *string) error {
	pos, err := f.Parse(args, w)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return nil
	case f.positional == "" || len(pos) > 1:
		return usagef("unexpected argument %q", pos[len(pos)-1])
	case *target != "":
		return usagef("both --%s and the argument %q given; use one", f.positional, pos[0])
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
func (f *flagSet) rewrite(err error) string {
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

func (f *flagSet) nearest(name string) string {
	best, bestD := "", 3
	for _, n := range f.order {
		if d := editDistance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// WriteUsage prints the command's help: synopsis, description, flags by
// section with their defaults, and examples.
func (f *flagSet) WriteUsage(w io.Writer) {
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

// listFlag collects comma-separated values; the flag may also be repeated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

func (l *listFlag) Get() any { return []string(*l) }

// checkFinite reports a NaN or infinite float flag.
func checkFinite(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return usagef("--%s %v: must be a finite number", name, v)
	}
	return nil
}

// parseDelimiter reads --delimiter: one character, or "tab".
func parseDelimiter(s string) (rune, error) {
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
		return 0, usagef("--delimiter %q: want one character, or tab", s)
	}
	return r[0], nil
}

// parseBytes reads a size such as 8G, 512MiB or 1e9 (bytes).
func parseBytes(s string) (uint64, error) {
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
