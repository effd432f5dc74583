//go:build !unix

package atomicfile

import "os"

// OpenRegular opens path for reading only if it is a regular file (see
// the unix version; here the type is checked after a plain open).
func OpenRegular(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(f, path); err != nil {
		return nil, err
	}
	return f, nil
}
