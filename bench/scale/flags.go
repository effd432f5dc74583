package scale

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rfmkit/rfm/internal/cli"
)

// ParseLists fills Sets, Methods, Sizes and TuneTime from the comma lists
// and the duration of rfm bench scale's flags, and checks ExactRows; the
// errors name the flags.
func (o *Options) ParseLists(sets, methods, sizes, tuneTime string) error {
	for _, s := range strings.Split(sizes, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 100 {
			return cli.Usagef("--sizes %q: %q is not a row count ≥ 100", sizes, s)
		}
		o.Sizes = append(o.Sizes, v)
	}
	if o.ExactRows < 100 {
		return cli.Usagef("--exact-rows %d: must be ≥ 100", o.ExactRows)
	}
	o.Sets = strings.Split(sets, ",")
	for _, s := range o.Sets {
		if !slices.Contains(Sets, s) {
			return cli.Usagef("--sets: unknown set %q (known: %s)", s, strings.Join(Sets, ", "))
		}
	}
	o.Methods = strings.Split(methods, ",")
	for _, m := range o.Methods {
		if !slices.Contains(Methods, m) {
			return cli.Usagef("--methods: unknown method %q (known: %s)", m, strings.Join(Methods, ", "))
		}
	}
	tt, err := time.ParseDuration(tuneTime)
	if err != nil || tt <= 0 {
		return cli.Usagef("--tune-time %q: want a duration such as 90s or 10m", tuneTime)
	}
	o.TuneTime = tt
	return nil
}
