package uci_test

import (
	"context"
	"fmt"
	"os"

	"github.com/rfmkit/rfm/uci"
)

// Run the paper protocol on a folder in the benchmark's layout (here a
// two-set fixture; point DataDir at shared/data/uci121 for the real one).
func ExampleRun() {
	out, err := os.MkdirTemp("", "uci-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(out)
	rep, err := uci.Run(context.Background(), uci.Options{
		DataDir:  "testdata/uci",
		Subset:   uci.SubsetAll,
		Protocol: uci.ProtocolPaper,
		OutDir:   out,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d computed, %d skipped\n", rep.Computed, rep.Skipped)
	for _, r := range rep.Results {
		if r.Status == uci.StatusOK {
			fmt.Printf("%s: %d selection(s), %d test splits\n", r.Name, len(r.RFM), len(r.TestAccuracies))
		} else {
			fmt.Printf("%s: %s (%s)\n", r.Name, r.Status, r.Reason)
		}
	}
	// Output:
	// 2 computed, 1 skipped
	// nodata: skipped (nodata_R.dat is missing)
	// tiny-a: 1 selection(s), 4 test splits
	// tiny-b: 1 selection(s), 4 test splits
}
