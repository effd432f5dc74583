package modelfile

import (
	"strings"
	"testing"
)

// Prefixed and SplitIndexed are inverses; a name that starts with the base
// but names no sub-model (out of range, leading zero, sign, no slash) is an
// error naming it, and other names are returned apart.
func TestSplitIndexed(t *testing.T) {
	a := []Array{{Name: "alpha"}, {Name: "m"}}
	all := append(Prefixed("leaf1/", a), Prefixed("leaf0/", a[:1])...)
	all = append(all, Array{Name: "dirs"})
	groups, rest, err := SplitIndexed(all, "leaf", 2)
	if err != nil || len(groups[0]) != 1 || len(groups[1]) != 2 || groups[1][1].Name != "m" || len(rest) != 1 || rest[0].Name != "dirs" {
		t.Fatalf("groups %v, rest %v, err %v", groups, rest, err)
	}
	for _, bad := range []string{"leaf2/alpha", "leaf01/alpha", "leaf-1/alpha", "leaf+1/alpha", "leaf1", "leaf/alpha"} {
		if _, _, err := SplitIndexed([]Array{{Name: bad}}, "leaf", 2); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: err %v", bad, err)
		}
	}
}
