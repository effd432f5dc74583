package rfm

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/kernel"
)

// The library names the field at fault, with the declared range.
func TestValidateNamesTheField(t *testing.T) {
	for _, tc := range []struct {
		edit func(c *Config)
		want string
	}{
		{func(c *Config) { c.AGOPPower = 0 }, "AGOPPower = 0: must be in (0, 2]"},
		{func(c *Config) { c.AGOPPower = 3 }, "AGOPPower = 3: must be in (0, 2]"},
		{func(c *Config) { c.Ridge = math.NaN() }, "Ridge = NaN: must be a finite number ≥ 0"},
		{func(c *Config) { c.MNorm = "l2" }, `MNorm = "l2": must be mean or max`},
		{func(c *Config) { c.EarlyStop = 1 }, "EarlyStop = 1: must be > 1 (0: off)"},
		{func(c *Config) { c.Kernel = kernel.Spec{Kind: kernel.NTK, Depth: 9} }, "Kernel.Depth = 9: must be in 1..5"},
		{func(c *Config) { c.FinalKernel = &kernel.Spec{Kind: kernel.Gaussian} }, "FinalKernel.Bandwidth = 0: must be > 0"},
		{func(c *Config) { c.Selection = "auc" }, `Selection = "auc": must be accuracy or loss`},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		var pe *ParamError
		if !errors.As(err, &pe) || err.Error() != tc.want {
			t.Errorf("got %v, want %s", err, tc.want)
		}
	}
	// Parameters of a kernel that does not use them are not checked.
	c := DefaultConfig()
	c.Kernel.Depth = 99
	if err := c.Validate(); err != nil {
		t.Errorf("depth of a laplace kernel: %v", err)
	}
}

// Each declared bound is enforced by Validate: the value just outside is
// refused naming the field, the bound side inside is accepted.
func TestValidateEnforcesDeclaredRanges(t *testing.T) {
	n := 0
	for _, p := range Params() {
		if p.Type != ParamFloat && p.Type != ParamInt {
			continue
		}
		r := p.Range
		type probe struct {
			v  float64
			ok bool
		}
		var probes []probe
		eps := func(v, dir float64) float64 {
			if p.Type == ParamInt {
				return v + dir
			}
			return math.Nextafter(v, dir*math.Inf(1))
		}
		if !math.IsInf(r.Lo, -1) {
			probes = append(probes, probe{r.Lo, !r.LoOpen || (r.Off && r.Lo == 0)}, probe{eps(r.Lo, -1), r.Off && eps(r.Lo, -1) == 0}, probe{eps(r.Lo, 1), true})
		}
		if !math.IsInf(r.Hi, 1) {
			probes = append(probes, probe{r.Hi, !r.HiOpen}, probe{eps(r.Hi, 1), false})
		}
		for _, pr := range probes {
			c := DefaultConfig()
			c.Kernel = kernel.Spec{Kind: kernel.GenLaplace, Bandwidth: 10, Exponent: 1}
			if p.Name == "depth" {
				c.Kernel = kernel.Spec{Kind: kernel.NTK, Depth: 2}
			}
			if p.Name == "power" { // q ≤ p keeps the kernel positive definite
				c.Kernel = kernel.Spec{Kind: kernel.LpLaplace, Bandwidth: 10, Power: 1, Exponent: math.SmallestNonzeroFloat64}
			}
			for _, s := range []Solver{SolverTree, SolverNystrom} { // the solver options apply to their solver
				if c2 := c; !p.Applies(&c2) {
					c2.Solver = s
					if p.Applies(&c2) {
						c.Solver = s
					}
				}
			}
			if p.Type == ParamInt {
				p.set(&c, int(pr.v))
			} else {
				p.set(&c, pr.v)
			}
			err := c.Validate()
			if pr.ok != (err == nil) {
				t.Errorf("%s = %v: error %v, want accepted %v", p.Field, pr.v, err, pr.ok)
			}
			if err != nil && !strings.HasPrefix(err.Error(), p.Field+" = ") {
				t.Errorf("%s = %v: message %q does not name the field", p.Field, pr.v, err)
			}
			n++
		}
	}
	if n < 20 {
		t.Errorf("only %d probes", n)
	}
}

// Model files written when AGOPPower 0 meant 1 omit agop_power: it
// decodes as 1; a stored value is kept.
func TestConfigJSONAGOPPower(t *testing.T) {
	b, err := json.Marshal(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	delete(m, "agop_power")
	old, _ := json.Marshal(m)
	var c Config
	if err := json.Unmarshal(old, &c); err != nil {
		t.Fatal(err)
	}
	if c.AGOPPower != 1 || c.Validate() != nil {
		t.Errorf("old config: AGOPPower %v, %v", c.AGOPPower, c.Validate())
	}
	if err := json.Unmarshal([]byte(`{"agop_power": 0.5, "ridge": 2}`), &c); err != nil || c.AGOPPower != 0.5 || c.Ridge != 2 {
		t.Errorf("stored power: %+v, %v", c, err)
	}
}
