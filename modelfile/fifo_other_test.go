//go:build !unix

package modelfile

import "errors"

const haveFIFOs = false

func mkfifo(string) error { return errors.New("not supported") }
