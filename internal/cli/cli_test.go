package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

// Sizes and delimiters parse as documented; nonsense is refused.
func TestParseHelpers(t *testing.T) {
	for in, want := range map[string]uint64{"0": 0, "1024": 1024, "8G": 8 << 30, "512MiB": 512 << 20, "1.5k": 1536, "2TB": 2 << 40} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1G", "1e30T", "NaN"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
	for in, want := range map[string]rune{"": 0, ",": ',', "tab": '\t', `\t`: '\t', ";": ';', "|": '|'} {
		if got, err := ParseDelimiter(in); err != nil || got != want {
			t.Errorf("ParseDelimiter(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{",,", `"`, "ab"} {
		if _, err := ParseDelimiter(bad); err == nil {
			t.Errorf("ParseDelimiter(%q) accepted", bad)
		}
	}
}

// A flag given twice is refused, a mistyped one gets a suggestion, and
// the flag package's errors name the flag with its -- spelling.
func TestFlagErrors(t *testing.T) {
	var n int
	var s string
	var l List
	f := NewFlagSet("x", "rfm x", "", "")
	f.Int(&n, "rows", 1, "")
	f.String(&s, "name", "", "")
	f.List(&l, "cols", "")
	for args, want := range map[string]string{
		"--rows 1 --rows 2": `--rows given twice ("1", then "2"); give it once`,
		"--rws 3":           "unknown flag --rws; did you mean --rows?",
		"--rows x":          `--rows "x": want an integer`,
		"--name":            "flag --name needs a value",
	} {
		_, err := f.Parse(strings.Fields(args), &bytes.Buffer{})
		var ue *UsageError
		if err == nil || !errors.As(err, &ue) || ue.Msg != want {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
		f = NewFlagSet("x", "rfm x", "", "")
		f.Int(&n, "rows", 1, "")
		f.String(&s, "name", "", "")
		f.List(&l, "cols", "")
	}
	if _, err := f.Parse([]string{"--cols", "a,b", "--cols", "c"}, &bytes.Buffer{}); err != nil || strings.Join(l, "") != "abc" {
		t.Errorf("a list accumulates: %v, %v", l, err)
	}
}

// On a terminal the bar shows the fraction, label, clock and ETA and
// never goes back; off a terminal only the summary line is printed, and
// nothing when quiet.
func TestProgress(t *testing.T) {
	// On a terminal: a bar with percentage, Clock and ETA; Finish clears it.
	var b bytes.Buffer
	p := NewProgress(&b, true, false)
	p.stopTicker() // the test moves the Clock itself
	now := p.start
	p.now = func() time.Time { return now }
	now = now.Add(10 * time.Second)
	p.Update(0.5, "round 2/5 fit")
	line := b.String()
	for _, want := range []string{"\r[", "50%", "round 2/5 fit", "0:10", "ETA 0:10", "\x1b[K"} {
		if !strings.Contains(line, want) {
			t.Errorf("bar %q lacks %q", line, want)
		}
	}
	p.Update(0.25, "later") // never goes back
	if !strings.Contains(b.String()[len(line):], " 50%") {
		t.Errorf("fraction went backwards: %q", b.String()[len(line):])
	}
	p.Finish("fit: done")
	if !strings.HasSuffix(b.String(), "\r\x1b[Kfit: done\n") {
		t.Errorf("finish: %q", b.String())
	}

	for _, tc := range []struct {
		name       string
		tty, quiet bool
		want       string
	}{
		{"no tty", false, false, "fit: done\n"}, // only the summary line
		{"quiet", true, true, ""},               // nothing, even on a terminal
	} {
		b.Reset()
		p = NewProgress(&b, tc.tty, tc.quiet)
		p.Update(0.5, "x")
		p.Finish("fit: done")
		if b.String() != tc.want {
			t.Errorf("%s: %q", tc.name, b.String())
		}
	}
	// Log: a line of its own, above the bar on a terminal; off a terminal
	// the line alone; nothing when quiet.
	b.Reset()
	p = NewProgress(&b, true, false)
	p.stopTicker()
	p.Update(0.5, "probe")
	p.Log("probe: 3 leaves, 12 s")
	if s := b.String(); !strings.Contains(s, "\r\x1b[Kprobe: 3 leaves, 12 s\n\r[") {
		t.Errorf("log on a terminal: %q", s)
	}
	for _, tc := range []struct {
		tty, quiet bool
		want       string
	}{{false, false, "a step\n"}, {true, true, ""}} {
		b.Reset()
		p = NewProgress(&b, tc.tty, tc.quiet)
		p.Log("a step")
		p.Abort()
		if b.String() != tc.want {
			t.Errorf("log (tty %v, quiet %v): %q", tc.tty, tc.quiet, b.String())
		}
	}
	for d, want := range map[time.Duration]string{0: "0:00", 65 * time.Second: "1:05", 3725 * time.Second: "1:02:05"} {
		if got := Clock(d); got != want {
			t.Errorf("Clock(%v) = %q, want %q", d, got, want)
		}
	}
}

// ParseInts keeps the default for an empty list and names the item out
// of range.
func TestParseInts(t *testing.T) {
	if got, err := ParseInts("ns", nil, []int{7}, 1, 10); err != nil || len(got) != 1 || got[0] != 7 {
		t.Errorf("empty: %v, %v", got, err)
	}
	if got, err := ParseInts("ns", []string{"1", " 10"}, nil, 1, 10); err != nil || len(got) != 2 || got[1] != 10 {
		t.Errorf("in range: %v, %v", got, err)
	}
	for _, c := range []struct {
		items  []string
		hi     int
		wanted string
	}{{[]string{"3", "11"}, 10, `--ns "11": want integers in 1..10`}, {[]string{"x"}, 0, `--ns "x": want integers ≥ 1, comma-separated`}, {[]string{"0"}, 0, `--ns "0": want integers ≥ 1`}} {
		if _, err := ParseInts("ns", c.items, nil, 1, c.hi); err == nil || !strings.HasPrefix(err.Error(), c.wanted) {
			t.Errorf("%v: %v, want %q", c.items, err, c.wanted)
		}
	}
}

// ParseFlags refuses a positional argument and passes -h through.
func TestParseFlags(t *testing.T) {
	var n int
	f := NewFlagSet("x", "rfm x", "", "")
	f.Int(&n, "rows", 1, "")
	if err := f.ParseFlags([]string{"--rows", "2", "extra"}, &bytes.Buffer{}); err == nil || err.Error() != `unexpected argument "extra"` {
		t.Errorf("positional: %v", err)
	}
	f = NewFlagSet("x", "rfm x", "", "")
	f.Int(&n, "rows", 1, "")
	var help bytes.Buffer
	if err := f.ParseFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) || !strings.Contains(help.String(), "--rows") {
		t.Errorf("-h: %v, %q", err, help.String())
	}
}
