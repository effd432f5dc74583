package serve

import (
	"bytes"
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

// jsonBody is the JSON request: rows as objects keyed by column name, or
// column names and rows of values.
type jsonBody struct {
	Rows    []map[string]any `json:"rows"`
	Columns []string         `json:"columns"`
	Data    [][]any          `json:"data"`
	Proba   *bool            `json:"proba"`
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
	if v, ok := query["proba"]; ok {
		p, err := strconv.ParseBool(strings.Join(v, ""))
		if err != nil {
			return nil, badRequest("query parameter proba=%q: use true or false", strings.Join(v, ","))
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
	b, err := io.ReadAll(body)
	if err != nil {
		return readError(err)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return badRequest("the body is empty; send {\"rows\": [{...}, ...]} or {\"columns\": [...], \"data\": [[...], ...]}")
	}
	var jb jsonBody
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if b[0] == '[' {
		err = dec.Decode(&jb.Rows)
	} else {
		dec.DisallowUnknownFields()
		err = dec.Decode(&jb)
	}
	if err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return badRequest("malformed JSON: more data after the request's JSON value (at byte %d)", dec.InputOffset()+1)
	}
	if jb.Proba != nil {
		req.proba = *jb.Proba
	}
	switch {
	case jb.Rows != nil && (jb.Columns != nil || jb.Data != nil):
		return badRequest("send either \"rows\" (objects keyed by column name) or \"columns\" with \"data\", not both")
	case jb.Rows != nil:
		if err := checkRows(len(jb.Rows), maxRows); err != nil {
			return err
		}
		for i, r := range jb.Rows {
			if r == nil {
				return badRequest("request: row %d is null; each row is an object keyed by column name", i+1)
			}
		}
		req.table, err = m.Pipeline.RecordsTable("request", jb.Rows)
	case jb.Columns != nil || jb.Data != nil:
		if jb.Columns == nil {
			return badRequest("\"data\" needs \"columns\": the names of its values' columns")
		}
		if err := checkRows(len(jb.Data), maxRows); err != nil {
			return err
		}
		req.table, err = m.Pipeline.RowsTable("request", jb.Columns, jb.Data)
	default:
		return badRequest("the request has no rows; send {\"rows\": [{...}, ...]} or {\"columns\": [...], \"data\": [[...], ...]}")
	}
	if err != nil {
		return badRequest("%v", err)
	}
	return nil
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
	var te *json.UnmarshalTypeError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return readError(mbe)
	case errors.As(err, &se):
		return badRequest("malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return badRequest("malformed request: the body is JSON %s; send an object with \"rows\", or \"columns\" and \"data\"", te.Value)
		}
		return badRequest("malformed request: field %q is %s, not %s", field, jsonKind(te.Value), jsonKind(te.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("malformed JSON: the body ends in the middle of a value")
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		return badRequest("unknown field %s; a request has \"rows\", or \"columns\" and \"data\", and optionally \"proba\"", strings.TrimPrefix(msg, "json: unknown field "))
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
