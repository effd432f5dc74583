package sysmem

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestHuman(t *testing.T) {
	for _, tc := range []struct {
		b    uint64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1536, "1.5 KiB"},
		{3 << 20, "3.0 MiB"},
		{5 << 29, "2.5 GiB"},
		{2 << 40, "2.0 TiB"},
	} {
		if got := Human(tc.b); got != tc.want {
			t.Errorf("Human(%d) = %q, want %q", tc.b, got, tc.want)
		}
	}
}

// Where /proc exists (Linux), both readings are positive: this process
// holds memory and the machine has some free.
func TestProcReadings(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Logf("no /proc/meminfo: only the fallbacks are checked")
		if _, ok := Available(); ok {
			t.Error("Available says ok without /proc/meminfo")
		}
		return
	}
	if avail, ok := Available(); !ok || avail == 0 {
		t.Errorf("Available = %d, %v", avail, ok)
	}
	if rss := PeakRSS(); rss == 0 {
		t.Error("PeakRSS = 0 on a system with /proc")
	}
	if _, ok := procField("/proc/meminfo", "NoSuchKey:"); ok {
		t.Error("a missing key reads as ok")
	}
}

// A cgroup v2 limit is read from memory.max and memory.current; "max"
// means no limit.
func TestCgroupMemory(t *testing.T) {
	dir := t.TempDir() + "/"
	write := func(name, v string) {
		if err := os.WriteFile(dir+name, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, found := cgroupMemory(dir); found {
		t.Fatal("found a limit in an empty folder")
	}
	write("memory.max", "max\n")
	write("memory.current", "1000\n")
	if _, _, found := cgroupMemory(dir); found {
		t.Fatal(`"max" read as a limit`)
	}
	write("memory.max", "4096\n")
	lim, used, found := cgroupMemory(dir)
	if !found || lim != 4096 || used != 1000 {
		t.Fatalf("got limit %d, used %d, found %v; want 4096, 1000, true", lim, used, found)
	}
}

// Binding the process to one CPU shows in its affinity, and the peak
// resident set can be reset below a past peak.
func TestPinAndResetPeak(t *testing.T) {
	cpus, err := ProcessCPUs()
	if err != nil {
		t.Skip("no affinity on this system:", err)
	}
	if err := PinProcess(cpus[:1]); err != nil {
		t.Fatal(err)
	}
	got, err := ProcessCPUs()
	if err2 := PinProcess(cpus); err2 != nil {
		t.Fatal(err2)
	}
	if err != nil || len(got) != 1 || got[0] != cpus[0] {
		t.Errorf("after binding to CPU %d the thread may run on %v (%v)", cpus[0], got, err)
	}
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	before := PeakRSS()
	big = nil
	runtime.GC()
	debug.FreeOSMemory()
	if err := ResetPeakRSS(); err != nil {
		t.Skip("clear_refs not writable here:", err)
	}
	if after := PeakRSS(); after+32<<20 > before {
		t.Errorf("peak resident set %d after a reset, %d before it: not reset below the 64 MiB buffer", after, before)
	}
}

// BoundHeap makes the limit the runtime's until restored, and leaves a
// GOMEMLIMIT of the environment, or no limit, alone.
func TestBoundHeap(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	restore := BoundHeap(123 << 20)
	if got := debug.SetMemoryLimit(-1); got != 123<<20 {
		t.Errorf("runtime limit %d with --memory-limit 123M, want %d", got, 123<<20)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("runtime limit %d after restoring, want %d", got, before)
	}
	BoundHeap(0)()
	t.Setenv("GOMEMLIMIT", "1GiB")
	BoundHeap(50 << 20)
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("runtime limit %d with GOMEMLIMIT set, want it untouched (%d)", got, before)
	}
}
