// Package sysmem reads what the system says about memory (MemAvailable,
// the process's peak resident set) and prints byte counts, for the
// packages that plan allocations against it (dataset, solve, rfm).
package sysmem

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// Available is the kernel's estimate of the memory available to a new
// process (MemAvailable in /proc/meminfo) in bytes, lowered to what is left
// under the cgroup v2 limit when the process runs in one (a container's
// limit is what the OOM killer enforces); ok is false where neither can be
// read.
func Available() (bytes uint64, ok bool) {
	kb, ok := procField("/proc/meminfo", "MemAvailable:")
	bytes = kb * 1024
	if lim, used, found := cgroupMemory("/sys/fs/cgroup/"); found {
		left := uint64(0)
		if lim > used {
			left = lim - used
		}
		if !ok || left < bytes {
			bytes, ok = left, true
		}
	}
	return bytes, ok
}

// cgroupMemory reads the cgroup v2 memory limit and usage under dir
// (found is false without a limit: "max" does not parse).
func cgroupMemory(dir string) (limit, used uint64, found bool) {
	read := func(name string) (uint64, bool) {
		b, err := os.ReadFile(dir + name)
		if err != nil {
			return 0, false
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		return v, err == nil
	}
	limit, ok1 := read("memory.max")
	used, ok2 := read("memory.current")
	return limit, used, ok1 && ok2
}

// PeakRSS is the process's high-water resident set (VmHWM) in bytes, or 0
// where the system does not say.
func PeakRSS() uint64 {
	kb, _ := procField("/proc/self/status", "VmHWM:")
	return kb * 1024
}

// procField reads the number (in kB) after key in a /proc file of
// "Key: value kB" lines.
func procField(path, key string) (uint64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == key {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err == nil {
				return kb, true
			}
		}
	}
	return 0, false
}

// Human prints b with a binary unit and one decimal ("1.5 GiB"); below
// 1 KiB, in bytes.
func Human(b uint64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.1f TiB", float64(b)/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}

// BoundHeap makes limit bytes (a command's --memory-limit) the Go
// runtime's soft memory limit until the returned function is called, so
// that the collector works harder as the process nears the limit instead
// of letting the heap grow to twice its live size between collections:
// `rfm fit --memory-limit 100M` on a 40 MB CSV peaked at 1.44× the limit
// without it and 1.07× with it. A live heap over the limit is not refused
// (the fit's own plan does that), only collected more often. limit 0, or
// a GOMEMLIMIT in the environment, leaves the runtime's limit alone.
func BoundHeap(limit uint64) (restore func()) {
	if limit == 0 || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetMemoryLimit(int64(min(limit, math.MaxInt64)))
	return func() { debug.SetMemoryLimit(prev) }
}
