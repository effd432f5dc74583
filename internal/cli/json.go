package cli

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteJSON prints v indented. Non-finite numbers cannot be JSON; they are
// rejected by encoding/json and reported.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON result: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
