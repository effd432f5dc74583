//go:build !linux

package sysmem

import "errors"

var errNoProc = errors.New("sysmem: not supported on this system")

// ResetPeakRSS is Linux only.
func ResetPeakRSS() error { return errNoProc }

// PinProcess is Linux only.
func PinProcess(cpus []int) error { return errNoProc }

// ProcessCPUs is Linux only.
func ProcessCPUs() ([]int, error) { return nil, errNoProc }
