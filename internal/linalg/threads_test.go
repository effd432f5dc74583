package linalg

import (
	"strings"
	"testing"
)

func TestCheckThreads(t *testing.T) {
	for _, n := range []int{0, 1, MaxThreads} {
		if err := CheckThreads(n); err != nil {
			t.Errorf("CheckThreads(%d) = %v", n, err)
		}
	}
	for _, n := range []int{-1, MaxThreads + 1, 10_000} {
		err := CheckThreads(n)
		if err == nil {
			t.Errorf("CheckThreads(%d) accepted", n)
			continue
		}
		if n > 0 && !strings.Contains(err.Error(), "at most 256") {
			t.Errorf("CheckThreads(%d) = %q, want the maximum named", n, err)
		}
	}
}
