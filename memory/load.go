package memory

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/mnist"
)

// Data is a set of examples to store, with what is known about them.
type Data struct {
	Set    *Set
	Labels []string // per example (the digit classes of MNIST images); nil if none
	Height int      // image height (0: not images)
	Name   string   // where the examples come from
}

// FromMNIST takes, for each digit class listed, the first not yet taken
// image of that class in train, in order. With cycles each inner list is
// one sequence (a cycle of the set), else every image is an example of its
// own (an autoencoder's set).
func FromMNIST(train *mnist.Set, classes [][]int, cycles bool) (*Data, error) {
	byClass := make([][]int, mnist.NumClasses)
	for i, y := range train.Y {
		if y >= 0 && y < mnist.NumClasses {
			byClass[y] = append(byClass[y], i)
		}
	}
	used := make([]int, mnist.NumClasses)
	d := &Data{Height: train.H, Name: "mnist"}
	var rows [][]float64
	var cyc [][]int
	for _, list := range classes {
		var c []int
		for _, k := range list {
			if k < 0 || k >= mnist.NumClasses {
				return nil, fmt.Errorf("memory: digit class %d: want 0..%d", k, mnist.NumClasses-1)
			}
			if used[k] >= len(byClass[k]) {
				return nil, fmt.Errorf("mnist: only %d images of digit %d", len(byClass[k]), k)
			}
			rows = append(rows, train.Image(byClass[k][used[k]]))
			used[k]++
			d.Labels = append(d.Labels, strconv.Itoa(k))
			c = append(c, len(rows)-1)
		}
		if cycles {
			cyc = append(cyc, c)
		}
	}
	set, err := NewSet(rows, cyc)
	if err != nil {
		return nil, err
	}
	d.Set = set
	return d, nil
}

// TableOptions says how FromTable reads a table.
type TableOptions struct {
	// Features are the value columns (none: every numeric column but Order
	// and Group).
	Features []string
	// Order and Group name the order column and the column naming each
	// row's sequence (none: one sequence).
	Order, Group string
	// Sequence orders the rows into sequences by Order; without it every
	// row is an example of its own.
	Sequence bool
}

// FromTable makes the set of a table's rows as o says.
func FromTable(t *dataset.Table, o TableOptions) (*Set, error) {
	names := o.Features
	if len(names) == 0 {
		for _, c := range t.Columns {
			if c.Kind == dataset.Numeric && c.Name != o.Order && c.Name != o.Group {
				names = append(names, c.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no numeric columns to store", t.Source)
	}
	n := t.NRows()
	rows := make([][]float64, n)
	for _, name := range names {
		c, ok := t.Column(name)
		if !ok {
			return nil, &dataset.ColumnNotFoundError{Source: t.Source, Role: "value column", Name: name, Columns: t.Names()}
		}
		if c.Kind != dataset.Numeric {
			return nil, fmt.Errorf("%s: column %q is not numeric", t.Source, name)
		}
		for i := 0; i < n; i++ {
			if c.IsMissing(i) {
				return nil, fmt.Errorf("%s: row %d: column %q is missing", t.Source, i+1, name)
			}
			rows[i] = append(rows[i], c.Num[i])
		}
	}
	var cycles [][]int
	if o.Sequence {
		var err error
		if cycles, err = tableCycles(t, o.Order, o.Group); err != nil {
			return nil, err
		}
	}
	set, err := NewSet(rows, cycles)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Source, err)
	}
	return set, nil
}

// tableCycles orders a table's rows into sequences by the order column,
// one per value of the group column.
func tableCycles(t *dataset.Table, order, group string) ([][]int, error) {
	oc, ok := t.Column(order)
	if !ok || oc.Kind != dataset.Numeric {
		return nil, fmt.Errorf("%s: --order %q is not a numeric column (the columns are %s)", t.Source, order, strings.Join(t.Names(), ", "))
	}
	var grp []string
	if group != "" {
		gc, ok := t.Column(group)
		if !ok {
			return nil, &dataset.ColumnNotFoundError{Source: t.Source, Role: "group column", Name: group, Columns: t.Names()}
		}
		grp = make([]string, t.NRows())
		for i := range grp {
			if gc.Kind == dataset.Numeric {
				grp[i] = strconv.FormatFloat(gc.Num[i], 'g', -1, 64)
			} else {
				grp[i] = gc.Str[i]
			}
		}
	}
	cycles, err := CyclesFromOrder(oc.Num, grp)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Source, err)
	}
	return cycles, nil
}
