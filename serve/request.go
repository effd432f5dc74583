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
// (proba=true). At most maxRows rows are accepted.
func decodeRequest(ctx context.Context, m *predictor.Model, contentType string, query map[string][]string, body io.Reader, maxRows int) (*request, error) {
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
		err = req.decodeJSON(m, body, maxRows)
	case "text/csv", "application/csv":
		err = req.decodeCSV(ctx, m, body, maxRows)
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

func (req *request) decodeJSON(m *predictor.Model, body io.Reader, maxRows int) error {
	br := bufio.NewReader(body)
	first, err := firstByte(br)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(br)
	dec.UseNumber()
	var (
		records        []map[string]any
		columns        []string
		data           [][]any
		haveRows       bool
		haveColumns    bool
		haveData       bool
		seen           = map[string]bool{}
		recordsWanted  = first == '['
		errNotObjectAt = func(i int, v any) error {
			return badRequest("request: row %d is %s; each row is an object keyed by column name", i+1, dataset.DescribeValue(v))
		}
	)
	if recordsWanted {
		if records, err = decodeRecords(dec, maxRows, errNotObjectAt); err != nil {
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
				return badRequest("field %q is given twice", key)
			}
			seen[key] = true
			switch key {
			case "rows":
				if records, err = decodeRecords(dec, maxRows, errNotObjectAt); err != nil {
					return err
				}
				haveRows = true
			case "columns":
				if err := dec.Decode(&columns); err != nil {
					return fieldError("columns", err)
				}
				haveColumns = columns != nil
			case "data":
				if data, err = decodeData(dec, maxRows); err != nil {
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
				return badRequest("unknown field %q; a request has \"rows\", or \"columns\" and \"data\", and optionally \"proba\"", key)
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
		req.table, err = m.Pipeline.RecordsTable("request", records)
	case haveColumns || haveData:
		if !haveColumns {
			return badRequest("\"data\" needs \"columns\": the names of its values' columns")
		}
		if err := checkRows(len(data), maxRows); err != nil {
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

// decodeRecords reads a JSON array of row objects one row at a time,
// refusing it as soon as it has more than maxRows rows (before the rest
// is decoded) or a row that is not an object (naming it).
func decodeRecords(dec *json.Decoder, maxRows int, notObject func(int, any) error) ([]map[string]any, error) {
	if err := expectArray(dec, "rows"); err != nil {
		return nil, err
	}
	var out []map[string]any
	for i := 0; dec.More(); i++ {
		if i == maxRows {
			return nil, tooManyRows(maxRows)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(err)
		}
		rec, ok := v.(map[string]any)
		if !ok {
			return nil, notObject(i, v)
		}
		out = append(out, rec)
	}
	if _, err := dec.Token(); err != nil { // ]
		return nil, jsonError(err)
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out, nil
}

// decodeData reads the "data" array of rows of values, at most maxRows.
func decodeData(dec *json.Decoder, maxRows int) ([][]any, error) {
	if err := expectArray(dec, "data"); err != nil {
		return nil, err
	}
	out := [][]any{}
	for i := 0; dec.More(); i++ {
		if i == maxRows {
			return nil, tooManyRows(maxRows)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, jsonError(err)
		}
		row, ok := v.([]any)
		if !ok {
			return nil, badRequest("request: row %d of \"data\" is %s; each row is an array of values", i+1, dataset.DescribeValue(v))
		}
		out = append(out, row)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(err)
	}
	return out, nil
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

func (req *request) decodeCSV(ctx context.Context, m *predictor.Model, body io.Reader, maxRows int) error {
	t, err := m.ReadTable(ctx, body, "request", "csv")
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return readError(mbe)
		}
		return badRequest("%v", err)
	}
	if err := checkRows(t.NRows(), maxRows); err != nil {
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
	if errors.As(err, &mbe) {
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over the %d-byte limit", mbe.Limit)}
	}
	return badRequest("reading the body: %v", err)
}

// jsonError describes a JSON decoding error with its place.
func jsonError(err error) error {
	var se *json.SyntaxError
	var mbe *http.MaxBytesError
	switch {
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
