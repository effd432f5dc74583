package phenomena

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText prints the result: the data and, per model and epoch or
// round, the training, test and control accuracy and the focus mass.
func (res *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s: %d training, %d test images of %d pixels; focus: %s\n\n", res.Kind, res.Train, res.Test, res.Inputs, res.Focus)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tepoch/round\ttrain acc %\ttest acc %\tcontrol acc %\tfocus mass\t")
	for _, p := range res.Points {
		ctl := "-"
		if res.Kind == "halves" {
			ctl = fmt.Sprintf("%.1f", p.TestAcc2)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%s\t%.3f\t\n", p.Model, p.Time, p.TrainAcc, p.TestAcc, ctl, p.FocusMass)
	}
	tw.Flush()
}
