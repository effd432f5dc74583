package sysmem

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// ResetPeakRSS sets the process's high-water resident set (PeakRSS) back
// to its current resident set, so that a later PeakRSS measures a phase
// of the process alone.
func ResetPeakRSS() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// PinProcess binds every thread of the process to the given CPUs (threads
// started later inherit the binding from the thread that starts them).
// nil binds to every CPU again.
func PinProcess(cpus []int) error {
	var mask [16]uint64 // 1 024 CPUs
	if cpus == nil {
		for i := range mask {
			mask[i] = ^uint64(0)
		}
	}
	for _, c := range cpus {
		if c < 0 || c >= 64*len(mask) {
			return fmt.Errorf("sysmem: CPU %d out of range", c)
		}
		mask[c/64] |= 1 << (c % 64)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
		if e != 0 && e != syscall.ESRCH { // a thread that has just ended
			return fmt.Errorf("sysmem: binding thread %d to CPUs %v: %w", tid, cpus, e)
		}
	}
	return nil
}

// ProcessCPUs is the CPUs the calling thread may run on.
func ProcessCPUs() ([]int, error) {
	var mask [16]uint64
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
	if e != 0 {
		return nil, e
	}
	var cpus []int
	for c := range 64 * len(mask) {
		if mask[c/64]&(1<<(c%64)) != 0 {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
