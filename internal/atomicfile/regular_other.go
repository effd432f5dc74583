//go:build !unix

package atomicfile

import (
	"io/fs"
	"os"
)

// OpenRegular opens path for reading only if it is a regular file (see
// the unix version; here the type is checked after a plain open).
func OpenRegular(path string) (*os.File, error) {
	return OpenRegularFile(path, os.O_RDONLY, 0)
}

// OpenRegularFile is OpenRegular with os.OpenFile's flag and permissions.
func OpenRegularFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(f, path); err != nil {
		return nil, err
	}
	return f, nil
}
