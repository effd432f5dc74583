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

// fileMeta is the ensemble's JSON document: its own fields and each
// member's model document (the member's arrays are stored with the prefix
// "member<i>/", see rfm.PackParts).
type fileMeta struct {
	Model      *fileEnsemble              `json:"ensemble"`
	MemberMeta []json.RawMessage          `json:"member_models"`
	Extra      map[string]json.RawMessage `json:"extra,omitempty"`
}

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
	f := &modelfile.File{Kind: FileKind}
	if m.Calibration != nil {
		f.FormatVersion = modelfile.VersionScaledOrCalibrated
	}
	metas, err := rfm.PackParts(f, "member", m.Members)
	if err != nil {
		return nil, err
	}
	own := fileEnsemble{m.Task, m.D, m.Outputs, m.Calibration, m.Note, m.Validation}
	b, err := json.Marshal(fileMeta{&own, metas, extra})
	if err != nil {
		return nil, fmt.Errorf("encode ensemble: %w", err)
	}
	f.Meta = b
	return f, nil
}

// FromFile unpacks an ensemble and the caller's extra sections, checking
// that every member loads and agrees with the others.
func FromFile(f *modelfile.File) (*Model, map[string]json.RawMessage, error) {
	meta, own, err := modelfile.DecodeSection(f, FileKind, "an ensemble model", "ensemble", func(x *fileMeta) *fileEnsemble { return x.Model })
	if err != nil {
		return nil, nil, err
	}
	k := len(meta.MemberMeta)
	if k == 0 || k > MaxMembers {
		return nil, nil, fmt.Errorf("ensemble metadata: %d member models (want 1 to %d)", k, MaxMembers)
	}
	if own.Task != rfm.Classification && own.Task != rfm.Regression {
		return nil, nil, fmt.Errorf("ensemble metadata: unknown task %q", own.Task)
	}
	members, _, err := rfm.UnpackParts(f, "member", meta.MemberMeta, false)
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
