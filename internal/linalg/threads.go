package linalg

import (
	"fmt"
	"runtime"
)

// MaxThreads is the largest thread count a user may ask for. More threads
// than CPUs do not speed up this CPU-bound work; each one costs an OS thread
// and its own buffers (kernel tiles, an n×outputs accumulator), so 10 000
// of them multiplied the memory by 4.7. The bound is fixed rather than tied
// to this machine's CPU count so that a command line (and its thread count,
// on which bit-identical results depend) works on any machine.
const MaxThreads = 256

// CheckThreads validates a user's thread count (0 = one per CPU) and says
// what is wrong without naming the flag; callers prefix it (--threads N).
func CheckThreads(n int) error {
	switch {
	case n < 0:
		return fmt.Errorf("must be ≥ 0 (0 = one per CPU)")
	case n > MaxThreads:
		return fmt.Errorf("at most %d (this machine has %d CPUs; threads beyond them only add memory)", MaxThreads, runtime.NumCPU())
	}
	return nil
}
