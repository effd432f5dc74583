package serve

import (
	"os"
	"syscall"
	"time"
)

// changeTime is the file's status-change time (ctime): any write to the
// file moves it, even one that restores the modification time afterwards
// (cp -p onto an existing file).
func changeTime(fi os.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(st.Ctim.Sec, st.Ctim.Nsec), true
}
