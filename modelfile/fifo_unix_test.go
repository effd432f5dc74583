//go:build unix

package modelfile

import "syscall"

const haveFIFOs = true

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }
