package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/predictor"
)

// httpError is an error with the status it answers.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) *httpError {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// request is a decoded predict request.
type request struct {
	table *dataset.Table
	proba bool
}

// decodeRequest reads the body (already limited in size) of a predict
// request into a table of the model's input columns. contentType chooses
// JSON (the default) or CSV ("text/csv"); query may ask for probabilities
// (proba=true). At most maxRows rows are accepted. What the body costs in
// memory as it is read and decoded is charged to c.
func decodeRequest(ctx context.Context, m *predictor.Model, contentType string, query map[string][]string, body io.Reader, maxRows int, c *charge) (*request, error) {
	req := &request{}
	if v, ok := query["proba"]; ok && len(v) > 0 {
		p, err := strconv.ParseBool(v[0])
		if err != nil {
			return nil, badRequest("query parameter proba=%q: use true or false", v[0])
		}
		req.proba = p
	}
	mt := "application/json"
	if contentType != "" {
		t, _, err := mime.ParseMediaType(contentType)
		if err != nil {
			return nil, &httpError{http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: %v", contentType, err)}
		}
		mt = t
	}
	var err error
	switch mt {
	case "application/json", "application/x-www-form-urlencoded": // the second is curl -d's default
		err = req.decodeJSON(m, &chargedReader{r: body, c: c, factor: 1}, maxRows, c)
	case "text/csv", "application/csv":
		err = req.decodeCSV(ctx, m, body, maxRows, c)
	default:
		return nil, &httpError{http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q is not supported; send application/json or text/csv", mt)}
	}
	if err != nil {
		return nil, err
	}
	if req.proba && len(m.Classes()) == 0 {
		return nil, badRequest("proba: the model is a regression model; it has no class probabilities")
	}
	return req, nil
}

func (req *request) decodeJSON(m *predictor.Model, body io.Reader, maxRows int, c *charge) error {
	br := bufio.NewReader(body)
	first, err := firstByte(br)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(br)
	dec.UseNumber()
	d := &jsonRows{dec: dec, c: c, maxRows: maxRows, inputs: inputIndex(m)}
	var (
		records     []map[string]any
		columns     []string
		data        [][]any
		haveRows    bool
		haveColumns bool
		haveData    bool
		seen        = map[string]bool{}
	)
	if first == '[' {
		if records, err = d.records(); err != nil {
			return err
		}
		haveRows = true
	} else {
		if first != '{' {
			var v any
			if err := dec.Decode(&v); err != nil {
				return jsonError(err)
			}
			return badRequest("malformed request: the body is %s; send an object with \"rows\", or \"columns\" and \"data\"", dataset.DescribeValue(v))
		}
		if _, err := dec.Token(); err != nil { // {
			return jsonError(err)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return jsonError(err)
			}
			key, _ := tok.(string)
			if seen[key] {
				return badRequest("field %s is given twice", clipQuote(key))
			}
			seen[key] = true
			switch key {
			case "rows":
				if records, err = d.records(); err != nil {
					return err
				}
				haveRows = true
			case "columns":
				if columns, err = d.columns(); err != nil {
					return err
				}
				haveColumns = columns != nil
			case "data":
				width := len(d.inputs)
				if haveColumns {
					width = len(columns)
				}
				if data, err = d.data(width); err != nil {
					return err
				}
				haveData = true
			case "proba":
				var p bool
				if err := dec.Decode(&p); err != nil {
					return fieldError("proba", err)
				}
				req.proba = p
			default:
				return badRequest("unknown field %s; a request has \"rows\", or \"columns\" and \"data\", and optionally \"proba\"", clipQuote(key))
			}
		}
		if _, err := dec.Token(); err != nil { // }
			return jsonError(err)
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return badRequest("malformed JSON: more data after the request's JSON value (at byte %d)", dec.InputOffset())
		}
		return jsonError(err)
	}
	switch {
	case haveRows && (haveColumns || haveData):
		return badRequest("send either \"rows\" (objects keyed by column name) or \"columns\" with \"data\", not both")
	case haveRows:
		if err := checkRows(len(records), maxRows); err != nil {
			return err
		}
		if err := c.add(int64(len(records)) * int64(len(d.inputs)) * tableCellCost); err != nil {
			return err
		}
		req.table, err = m.Pipeline.RecordsTable("request", records)
	case haveColumns || haveData:
		if !haveColumns {
			return badRequest("\"data\" needs \"columns\": the names of its values' columns")
		}
		if err := checkRows(len(data), maxRows); err != nil {
			return err
		}
		if err := c.add(int64(len(data)) * int64(len(d.inputs)) * tableCellCost); err != nil {
			return err
		}
		req.table, err = m.Pipeline.RowsTable("request", columns, data)
	default:
		return badRequest("the request has no rows; send {\"rows\": [{...}, ...]} or {\"columns\": [...], \"data\": [[...], ...]}")
	}
	if err != nil {
		return badRequest("%v", err)
	}
	return nil
}

// inputIndex maps the model's input columns to their positions.
func inputIndex(m *predictor.Model) map[string]int {
	names := m.Pipeline.InputColumns()
	idx := make(map[string]int, len(names))
	for i, n := range names {
		idx[n] = i
	}
	return idx
}

// jsonRows decodes the rows of a JSON request token by token, so that a
// row is checked while it is read: a key that is not an input column, a
// key given twice, or a row longer than the columns is refused before the
// rest is decoded, and each value is charged to the request as it comes.
// A decoded request thus holds at most its rows times the model's inputs
// values.
type jsonRows struct {
	dec     *json.Decoder
	c       *charge
	maxRows int
	inputs  map[string]int
	names   []string // the inputs in order, for messages
}

func (d *jsonRows) inputList() string {
	if d.names == nil {
		d.names = make([]string, len(d.inputs))
		for n, i := range d.inputs {
			d.names[i] = n
		}
	}
	return quoteList(d.names)
}

// records reads an array of row objects.
func (d *jsonRows) records() ([]map[string]any, error) {
	if err := expectArray(d.dec, "rows"); err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for i := 0; d.dec.More(); i++ {
		if err := d.openRow(i, "", '{', "an object keyed by column name"); err != nil {
			return nil, err
		}
		if err := d.c.add(recordCost); err != nil {
			return nil, err
		}
		rec := map[string]any{}
		for d.dec.More() {
			tok, err := d.dec.Token()
			if err != nil {
				return nil, jsonError(err)
			}
			key, _ := tok.(string)
			if _, ok := d.inputs[key]; !ok {
				return nil, badRequest("request: row %d: %s is not an input column of the model; the inputs are %s", i+1, clipQuote(key), d.inputList())
			}
			if _, dup := rec[key]; dup {
				return nil, badRequest("request: row %d: key %s is given twice", i+1, clipQuote(key))
			}
			v, err := d.value(func() string { return fmt.Sprintf("row %d, column %s", i+1, clipQuote(key)) })
			if err != nil {
				return nil, err
			}
			if err := d.c.add(keyCost + int64(len(key))); err != nil {
				return nil, err
			}
			rec[key] = v
		}
		if _, err := d.dec.Token(); err != nil { // }
			return nil, jsonError(err)
		}
		out = append(out, rec)
	}
	if _, err := d.dec.Token(); err != nil { // ]
		return nil, jsonError(err)
	}
	return out, nil
}

// openRow reads the token that opens row i (from 0) of an array of rows:
// open, or an error naming the row (of says which array, as in ` of
// "data"`; want what a row is); a row past maxRows is refused.
func (d *jsonRows) openRow(i int, of string, open json.Delim, want string) error {
	if i == d.maxRows {
		return tooManyRows(d.maxRows)
	}
	tok, err := d.dec.Token()
	if err != nil {
		return jsonError(err)
	}
	if t, ok := tok.(json.Delim); !ok || t != open {
		return badRequest("request: row %d%s is %s; each row is %s", i+1, of, describeToken(tok), want)
	}
	return nil
}

// columns reads the "columns" array: names of input columns, each once
// (nil for null).
func (d *jsonRows) columns() ([]string, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	if tok == nil {
		return nil, nil
	}
	if t, ok := tok.(json.Delim); !ok || t != '[' {
		return nil, badRequest("malformed request: field \"columns\" is %s, not an array", describeToken(tok))
	}
	names := []string{}
	seen := map[string]int{}
	for j := 0; d.dec.More(); j++ {
		tok, err := d.dec.Token()
		if err != nil {
			return nil, jsonError(err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, badRequest("malformed request: item %d of \"columns\" is %s, not a string", j+1, describeToken(tok))
		}
		if _, ok := d.inputs[name]; !ok {
			return nil, badRequest("request: column %d, %s, is not an input column of the model; the inputs are %s", j+1, clipQuote(name), d.inputList())
		}
		if k, dup := seen[name]; dup {
			return nil, badRequest("request: column %s is named twice (columns %d and %d)", clipQuote(name), k+1, j+1)
		}
		seen[name] = j
		names = append(names, name)
	}
	if _, err := d.dec.Token(); err != nil { // ]
		return nil, jsonError(err)
	}
	return names, nil
}

// data reads the "data" array of rows of values, each row at most width
// values long.
func (d *jsonRows) data(width int) ([][]any, error) {
	if err := expectArray(d.dec, "data"); err != nil {
		return nil, err
	}
	out := [][]any{}
	for i := 0; d.dec.More(); i++ {
		if err := d.openRow(i, ` of "data"`, '[', "an array of values"); err != nil {
			return nil, err
		}
		row := []any{}
		for d.dec.More() {
			if len(row) == width {
				return nil, badRequest("request: row %d of \"data\" has more than %d values; there are %d columns", i+1, width, width)
			}
			v, err := d.value(func() string { return fmt.Sprintf("row %d of \"data\", value %d", i+1, len(row)+1) })
			if err != nil {
				return nil, err
			}
			row = append(row, v)
		}
		if _, err := d.dec.Token(); err != nil { // ]
			return nil, jsonError(err)
		}
		out = append(out, row)
	}
	if _, err := d.dec.Token(); err != nil { // ]
		return nil, jsonError(err)
	}
	return out, nil
}

// value reads one cell: a number, string, boolean or null, charged to the
// request; an array or object is refused (where names its place).
func (d *jsonRows) value(where func() string) (any, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, jsonError(err)
	}
	size := int64(cellCost)
	switch v := tok.(type) {
	case json.Delim:
		return nil, badRequest("request: %s: got %s; a cell is a number, a string, a boolean or null", where(), describeToken(v))
	case string:
		size += int64(len(v))
	case json.Number:
		size += int64(len(v))
	}
	if err := d.c.add(size); err != nil {
		return nil, err
	}
	return tok, nil
}

// clipQuote quotes s for a message, cut to its first 64 bytes: client
// input is never echoed without bound.
func clipQuote(s string) string {
	const most = 64
	if len(s) <= most {
		return strconv.Quote(s)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d bytes)", len(s))
}

// firstByte peeks at the first non-space byte of the body.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return 0, badRequest("the body is empty; send {\"rows\": [{...}, ...]} or {\"columns\": [...], \"data\": [[...], ...]}")
		}
		if err != nil {
			return 0, readError(err)
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return b, br.UnreadByte()
	}
}

// expectArray reads the '[' that starts a field's array.
func expectArray(dec *json.Decoder, field string) error {
	tok, err := dec.Token()
	if err != nil {
		return jsonError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return badRequest("malformed request: field %q is %s, not an array", field, describeToken(tok))
	}
	return nil
}

func tooManyRows(maxRows int) error {
	return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the request has more than %d rows; at most %d are accepted per request (send them in several)", maxRows, maxRows)}
}

// fieldError describes a field whose value has the wrong type.
func fieldError(field string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return badRequest("malformed request: field %q is %s, not %s", field, jsonKind(te.Value), jsonKind(te.Type.Kind().String()))
	}
	return jsonError(err)
}

// describeToken names the kind of the value a token starts.
func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return "an object"
		}
		return "an array"
	default:
		return dataset.DescribeValue(t)
	}
}

func (req *request) decodeCSV(ctx context.Context, m *predictor.Model, body io.Reader, maxRows int, c *charge) error {
	// The reader holds the whole text, then the table's cells (at most one
	// per two bytes): charged per byte as it arrives. The guard refuses a
	// line wider than the model's inputs before the table is built.
	width := len(m.Pipeline.Inputs)
	guard := newCSVGuard(&chargedReader{r: body, c: c, factor: 2}, width)
	t, err := m.ReadTable(ctx, guard, "request", "csv")
	if err != nil {
		var he *httpError
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &he):
			return he
		case errors.As(err, &mbe):
			return readError(mbe)
		}
		return badRequest("%v", err)
	}
	if err := checkRows(t.NRows(), maxRows); err != nil {
		return err
	}
	if err := c.add(int64(t.NRows()) * int64(width) * tableCellCost); err != nil {
		return err
	}
	// Every input present (else the pipeline says which is missing), and
	// nothing else: a misspelt or unexpected column is refused, as in JSON.
	inputs := map[string]bool{}
	for _, name := range m.Pipeline.InputColumns() {
		inputs[name] = true
	}
	for j, name := range t.Names() {
		if !inputs[name] {
			return badRequest("request: column %d, %q, is not an input column of the model; remove it (the inputs are %s)", j+1, name, quoteList(m.Pipeline.InputColumns()))
		}
	}
	req.table = t
	return nil
}

func checkRows(n, maxRows int) error {
	if n == 0 {
		return badRequest("the request has no rows")
	}
	if n > maxRows {
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the request has %d rows; at most %d are accepted per request (send them in several)", n, maxRows)}
	}
	return nil
}

// readError answers a failed body read: too large, or a broken upload.
func readError(err error) error {
	var mbe *http.MaxBytesError
	var he *httpError
	if errors.As(err, &he) {
		return he
	}
	if errors.As(err, &mbe) {
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over the %d-byte limit", mbe.Limit)}
	}
	return badRequest("reading the body: %v", err)
}

// jsonError describes a JSON decoding error with its place.
func jsonError(err error) error {
	var se *json.SyntaxError
	var mbe *http.MaxBytesError
	var he *httpError
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &mbe):
		return readError(mbe)
	case errors.As(err, &se):
		return badRequest("malformed JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: the body ends in the middle of a value")
	}
	return badRequest("malformed JSON: %v", err)
}

// jsonKind names a JSON or Go kind for a message.
func jsonKind(k string) string {
	switch k {
	case "slice", "array":
		return "an array"
	case "map", "object", "struct":
		return "an object"
	case "string":
		return "a string"
	case "number", "float64", "int":
		return "a number"
	case "bool":
		return "a boolean"
	}
	return k
}

func quoteList(names []string) string {
	q := make([]string, 0, min(len(names), 20))
	for i, n := range names {
		if i == 20 {
			q = append(q, fmt.Sprintf("… (%d in all)", len(names)))
			break
		}
		q = append(q, strconv.Quote(n))
	}
	return strings.Join(q, ", ")
}

// csvDelims are the delimiters the CSV reader may detect.
var csvDelims = [...]byte{',', '\t', ';', '|'}

// csvGuard passes a CSV body through while it counts each line's fields
// for each delimiter the reader may pick (honouring double quotes). A
// delimiter that gives some line many more fields than the model has
// inputs cannot be the request's (a few more are let through, for the
// reader to name the column that is not an input); when none is left the body is refused at once,
// before the reader has built a table of a line of millions of fields.
// After the first line, only delimiters that split it into 2 or more
// fields stay (when there is one), so a row of commas in a comma file is
// not let through by a delimiter that never occurs.
type csvGuard struct {
	r       io.Reader
	width   int
	most    int // fields allowed: a few more than width, for the reader's own message
	line    int
	fields  [len(csvDelims)]int
	alive   [len(csvDelims)]bool
	inQuote bool
	err     error
}

func newCSVGuard(r io.Reader, width int) *csvGuard {
	g := &csvGuard{r: r, width: width, most: width + max(width, 16), line: 1}
	for k := range g.alive {
		g.alive[k] = true
		g.fields[k] = 1
	}
	return g
}

func (g *csvGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	for _, b := range p[:n] {
		switch {
		case b == '"':
			g.inQuote = !g.inQuote
		case g.inQuote:
		case b == '\n':
			g.endLine()
			if g.err = g.check(); g.err != nil {
				return 0, g.err
			}
		default:
			for k, d := range csvDelims {
				if b == d && g.alive[k] {
					g.fields[k]++
					if g.fields[k] > g.most {
						g.alive[k] = false
						if g.err = g.check(); g.err != nil {
							return 0, g.err
						}
					}
				}
			}
		}
	}
	return n, err
}

func (g *csvGuard) endLine() {
	if g.line == 1 {
		split, died := false, false
		for k := range g.alive {
			split = split || (g.alive[k] && g.fields[k] >= 2)
			died = died || !g.alive[k]
		}
		if !split && died && g.width >= 2 {
			// Too wide for one delimiter, one field for the others.
			for k := range g.alive {
				g.alive[k] = false
			}
			return
		}
		if split {
			for k := range g.alive {
				g.alive[k] = g.alive[k] && g.fields[k] >= 2
			}
		}
	}
	g.line++
	for k := range g.fields {
		g.fields[k] = 1
	}
}

func (g *csvGuard) check() error {
	for _, a := range g.alive {
		if a {
			return nil
		}
	}
	return badRequest("request: line %d has more than %d fields, and the model has %d input columns (whichever of comma, tab, semicolon or bar is the delimiter)", g.line, g.most, g.width)
}
