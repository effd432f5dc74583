package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
)

var update = flag.Bool("update", false, "rewrite the generated table of USAGE.md")

// parseFit parses fit's flags and builds the engine configuration.
func parseFit(args ...string) (rfm.Config, error) {
	var o fitOptions
	f := fitFlags(&o)
	if _, err := f.Parse(args, &bytes.Buffer{}); err != nil {
		return rfm.Config{}, err
	}
	return o.eng.Config(f.FlagSet)
}

// kernelFor returns flags that select a kernel the parameter applies to.
func kernelFor(p *rfm.Param) []string {
	if def := rfm.DefaultConfig(); p.Applies(&def) {
		return nil
	}
	for _, k := range kernel.Kinds() {
		c := rfm.DefaultConfig()
		c.Kernel = kernel.Spec{Kind: k, Bandwidth: 10, Exponent: 1, Depth: 2}
		if p.Applies(&c) {
			return []string{"--kernel", string(k)}
		}
	}
	for _, s := range []rfm.Solver{rfm.SolverAuto, rfm.SolverTree, rfm.SolverNystrom} {
		c := rfm.DefaultConfig()
		c.Solver = s
		if p.Applies(&c) {
			return []string{"--solver", string(s)}
		}
	}
	return nil
}

// outside returns values just outside each finite bound of a range (and
// NaN for floats), and one just inside each.
func outside(p *rfm.Param) (bad, good []string) {
	r := p.Range
	step := func(v, dir float64) float64 {
		if p.Type == rfm.ParamInt {
			return v + dir
		}
		return math.Nextafter(v, dir*math.Inf(1))
	}
	g := func(v float64) string { return fmt.Sprint(v) }
	if !math.IsInf(r.Lo, -1) {
		if r.LoOpen {
			bad = append(bad, g(r.Lo))
			good = append(good, g(step(r.Lo, 1)))
		} else {
			bad = append(bad, g(step(r.Lo, -1)))
			good = append(good, g(r.Lo))
		}
	}
	if !math.IsInf(r.Hi, 1) {
		if r.HiOpen {
			bad = append(bad, g(r.Hi))
			good = append(good, g(step(r.Hi, -1)))
		} else {
			bad = append(bad, g(step(r.Hi, 1)))
			good = append(good, g(r.Hi))
		}
	}
	if p.Type == rfm.ParamFloat {
		bad = append(bad, "NaN", "+Inf")
	}
	return bad, good
}

// Every declared range is enforced: the value just outside each bound is
// refused with a message naming the flag and the value, the value at or
// just inside it is accepted.
func TestEveryDeclaredRangeIsEnforced(t *testing.T) {
	checked := 0
	for _, p := range rfm.Params() {
		base := kernelFor(p)
		var bad, good []string
		switch p.Type {
		case rfm.ParamInt, rfm.ParamFloat:
			bad, good = outside(p)
		case rfm.ParamChoice:
			bad, good = []string{"nope"}, p.Choices
		default:
			continue
		}
		if len(bad) == 0 {
			t.Errorf("--%s: a numeric parameter without a bound", p.Name)
		}
		for _, v := range bad {
			_, err := parseFit(append(base, "--"+p.Name, v)...)
			want := fmt.Sprintf("--%s %s: must be", p.Name, v)
			if p.Type == rfm.ParamChoice {
				want = fmt.Sprintf("--%s %q: must be", p.Name, v)
			}
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("--%s %s: error %v, want it to start with %q", p.Name, v, err, want)
			}
			checked++
		}
		for _, v := range good {
			if _, err := parseFit(append(base, "--"+p.Name, v)...); err != nil {
				t.Errorf("--%s %s refused: %v", p.Name, v, err)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d out-of-range values checked", checked)
	}
}

func TestAGOPPowerZeroRefused(t *testing.T) {
	_, err := parseFit("--agop-power", "0")
	if err == nil || err.Error() != "--agop-power 0: must be in (0, 2]" {
		t.Errorf("--agop-power 0: %v", err)
	}
	r := runInProcess("fit", "--data", "none.csv", "--agop-power", "0")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--agop-power 0: must be in (0, 2]") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// A kernel parameter the chosen kernels do not use is refused, by name.
func TestParamNotApplying(t *testing.T) {
	for _, tc := range []struct{ args []string }{
		{[]string{"--exponent", "1.5"}},
		{[]string{"--kernel", "ntk", "--bandwidth", "3"}},
		{[]string{"--depth", "3"}},
	} {
		_, err := parseFit(tc.args...)
		name := tc.args[len(tc.args)-2]
		if err == nil || !strings.HasPrefix(err.Error(), name+" applies to ") {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
	// Used by the final kernel: accepted.
	if c, err := parseFit("--final-kernel", "gen-laplace", "--exponent", "1.5"); err != nil || c.FinalKernel.Exponent != 1.5 || c.Kernel.Exponent != 0 {
		t.Errorf("--exponent for the final kernel: %+v, %v", c.FinalKernel, err)
	}
}

func TestFlagsGivenTwice(t *testing.T) {
	for _, args := range [][]string{
		{"--target", "a", "--target", "b"},
		{"--data", "x.csv", "--data", "y.csv"},
		{"--out", "a.rfm", "--out", "b.rfm"},
		{"--ridge", "1", "--ridge", "1"},
		{"--diag", "--diag=false"},
	} {
		_, err := parseFit(args...)
		if err == nil || !strings.Contains(err.Error(), args[0]+" given twice") {
			t.Errorf("%v: %v", args, err)
		}
	}
	r := runInProcess("predict", "--model", "m.rfm", "--out", "a.csv", "--out", "b.csv", "--data", "d.csv")
	if r.code != exitUsage || !strings.Contains(r.stderr, `--out given twice ("a.csv", then "b.csv")`) {
		t.Errorf("predict: exit %d, %q", r.code, r.stderr)
	}
	// Lists accumulate.
	var o fitOptions
	f := fitFlags(&o)
	if _, err := f.Parse([]string{"--ignore", "a", "--ignore", "b,c", "--categorical", "d", "--categorical", "e"}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.cols.ignore, ",") != "a,b,c" || len(o.cols.categorical) != 2 {
		t.Errorf("lists: ignore %v, categorical %v", o.cols.ignore, o.cols.categorical)
	}
}

// The help's ranges and defaults are the declaration's.
func TestHelpRangesFromDeclaration(t *testing.T) {
	r := runInProcess("fit", "-h")
	for _, p := range rfm.Params() {
		line := regexp.MustCompile(`(?m)^  --` + regexp.QuoteMeta(p.Name) + `\b.*$`).FindString(r.stdout)
		if line == "" {
			t.Errorf("--%s missing from fit -h", p.Name)
			continue
		}
		if c := p.Constraint(); c != "" && !strings.Contains(line, "; "+c) {
			t.Errorf("--%s: help %q does not state %q", p.Name, line, c)
		}
		if d := p.DefaultText(); d != "" && d != "0" && d != "false" && !strings.Contains(line, "(default "+d+")") {
			t.Errorf("--%s: help %q does not give the default %s", p.Name, line, d)
		}
	}
	if !strings.Contains(r.stdout, "--agop-power P") || !strings.Contains(r.stdout, "P in (0, 2]") {
		t.Errorf("fit -h:\n%s", r.stdout)
	}
}

// paramTable is USAGE.md's table of the hyperparameters.
func paramTable() string {
	var b strings.Builder
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	for _, p := range rfm.Params() {
		left := "--" + p.Name
		if p.Arg != "" {
			left += " " + p.Arg
		}
		def := p.DefaultText()
		switch {
		case p.Type == rfm.ParamBool:
			def = "off"
		case def == "" && p.Name == "selection":
			def = "by task"
		case def == "0" && p.Range.Off:
			def = "`0` (off)"
		case def != "":
			def = "`" + def + "`"
		}
		help := strings.ReplaceAll(p.Help, "`", "")
		if c := p.Constraint(); c != "" {
			help += "; " + c
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", left, def, strings.ReplaceAll(help, "|", `\|`))
	}
	return b.String()
}

// USAGE.md's table of the hyperparameters is the declaration's.
func TestUsageParamTable(t *testing.T) {
	doc, err := os.ReadFile("USAGE.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)(<!-- params:begin[^\n]*-->\n)(.*?)(<!-- params:end -->)`)
	m := re.FindSubmatchIndex(doc)
	if m == nil {
		t.Fatal("USAGE.md has no params:begin/params:end block")
	}
	want := paramTable()
	if got := string(doc[m[4]:m[5]]); got != want {
		if *update {
			out := append(append(append([]byte(nil), doc[:m[4]]...), want...), doc[m[5]:]...)
			if err := os.WriteFile("USAGE.md", out, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("USAGE.md's hyperparameter table is stale; run go test ./cmd/rfm -run TestUsageParamTable -update\ngot:\n%s\nwant:\n%s", got, want)
	}
}
