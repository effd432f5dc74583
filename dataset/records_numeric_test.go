package dataset

import (
	"strings"
	"testing"
)

// numericValue takes every Go integer and float type at its value (the
// largest uint64 as float64 rounds it), and refuses a named integer type.
func TestNumericValueGoTypes(t *testing.T) {
	ms := newMissingSet(nil)
	for _, tc := range []struct {
		v    any
		want float64
	}{
		{int(-2), -2}, {int8(-128), -128}, {int16(300), 300}, {int32(-70000), -70000},
		{int64(1) << 53, 1 << 53}, {uint(5), 5}, {uint8(255), 255}, {uint16(65535), 65535},
		{uint32(1) << 31, 1 << 31}, {uint64(1<<64 - 1), float64(uint64(1<<64 - 1))},
		{float32(0.5), 0.5}, {1.25, 1.25},
	} {
		x, missing, err := numericValue(tc.v, ms)
		if err != "" || missing || x != tc.want {
			t.Errorf("numericValue(%T %v) = %v, %v, %q; want %v", tc.v, tc.v, x, missing, err, tc.want)
		}
	}
	type level int
	if _, _, err := numericValue(level(3), ms); !strings.Contains(err, "dataset.level") {
		t.Errorf("a named integer type: err %q, want it refused by its type", err)
	}
}
