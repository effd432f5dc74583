package ensemble

import (
	"encoding/json"
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/modelfile"
)

// FileKind is the modelfile kind of an ensemble. Builds that predate
// ensembles read the container and refuse the kind with a clear message.
const FileKind = "rfm.Ensemble"

// nesting is how an ensemble is stored: its own fields under "ensemble"
// and each member's model document under "member_models" (the member's
// arrays are stored with the prefix "member<i>/").
var nesting = modelfile.Nesting{Kind: FileKind, What: "an ensemble model", Own: "ensemble", Parts: "member_models", Base: "member", PartKind: rfm.FileKind, MaxParts: MaxMembers}

// fileEnsemble is the ensemble's own fields as files hold them (the
// config is the first member's and is not stored twice).
type fileEnsemble struct {
	Task        rfm.Task         `json:"task"`
	D           int              `json:"d"`
	Outputs     int              `json:"outputs"`
	Calibration *rfm.Calibration `json:"calibration,omitempty"`
	Note        string           `json:"note,omitempty"`
	Validation  *Validation      `json:"validation,omitempty"`
}

func init() {
	modelfile.Register(FileKind, FromFile)
}

// ToFile packs the ensemble (and the caller's extra JSON sections) into a
// modelfile container.
func (m *Model) ToFile(extra map[string]json.RawMessage) (*modelfile.File, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	f := &modelfile.File{}
	if m.Calibration != nil {
		f.FormatVersion = modelfile.VersionScaledOrCalibrated
	}
	own := fileEnsemble{m.Task, m.D, m.Outputs, m.Calibration, m.Note, m.Validation}
	return modelfile.PackNested(nesting, f, &own, m.Members, extra)
}

// FromFile unpacks an ensemble and the caller's extra sections, checking
// that every member loads and agrees with the others.
func FromFile(f *modelfile.File) (*Model, map[string]json.RawMessage, error) {
	meta, err := modelfile.DecodeNested[fileEnsemble](f, nesting)
	if err != nil {
		return nil, nil, err
	}
	own := meta.Own
	if own.Task != rfm.Classification && own.Task != rfm.Regression {
		return nil, nil, fmt.Errorf("ensemble metadata: unknown task %q", own.Task)
	}
	members, _, err := modelfile.UnpackParts(nesting, f, meta.Parts, false, rfm.FromFile)
	if err != nil {
		return nil, nil, fmt.Errorf("ensemble file: %w", err)
	}
	for i, mm := range members {
		if mm == nil {
			return nil, nil, fmt.Errorf("ensemble file: member %d is missing", i)
		}
	}
	m := &Model{Header: rfm.Header{Config: members[0].Config, Task: own.Task, D: own.D, Outputs: own.Outputs, Calibration: own.Calibration},
		Members: members, Note: own.Note, Validation: own.Validation}
	if err := m.Check(); err != nil {
		return nil, nil, fmt.Errorf("ensemble file: %w", err)
	}
	return m, meta.Extra, nil
}
