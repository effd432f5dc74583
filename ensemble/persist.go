package ensemble

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/modelfile"
)

// FileKind is the modelfile kind of an ensemble. Builds that predate
// ensembles read the container and refuse the kind with a clear message.
const FileKind = "rfm.Ensemble"

// fileMeta is the ensemble's JSON document: its own fields and each
// member's model document (the member's arrays are stored with the prefix
// "member<i>/").
type fileMeta struct {
	Model      *Model                     `json:"ensemble"`
	MemberMeta []json.RawMessage          `json:"member_models"`
	Extra      map[string]json.RawMessage `json:"extra,omitempty"`
}

func memberPrefix(i int) string { return "member" + strconv.Itoa(i) + "/" }

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
	meta := fileMeta{Model: m, MemberMeta: make([]json.RawMessage, len(m.Members)), Extra: extra}
	for i, mm := range m.Members {
		mf, err := mm.ToFile(nil)
		if err != nil {
			return nil, fmt.Errorf("member %d: %w", i, err)
		}
		f.FormatVersion = max(f.FormatVersion, mf.FormatVersion)
		meta.MemberMeta[i] = mf.Meta
		f.Arrays = append(f.Arrays, modelfile.Prefixed(memberPrefix(i), mf.Arrays)...)
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode ensemble: %w", err)
	}
	f.Meta = b
	return f, nil
}

// FromFile unpacks an ensemble and the caller's extra sections, checking
// that every member loads and agrees with the others.
func FromFile(f *modelfile.File) (*Model, map[string]json.RawMessage, error) {
	var meta fileMeta
	if err := f.DecodeMeta(FileKind, "an ensemble model", "ensemble", &meta); err != nil {
		return nil, nil, err
	}
	m := meta.Model
	if m == nil {
		return nil, nil, errors.New("ensemble metadata has no ensemble section")
	}
	k := len(meta.MemberMeta)
	if k == 0 || k > MaxMembers {
		return nil, nil, fmt.Errorf("ensemble metadata: %d member models (want 1 to %d)", k, MaxMembers)
	}
	if m.Task != rfm.Classification && m.Task != rfm.Regression {
		return nil, nil, fmt.Errorf("ensemble metadata: unknown task %q", m.Task)
	}
	byMember, rest, err := modelfile.SplitIndexed(f.Arrays, "member", k)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("array %q names no member", rest[0].Name)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("ensemble file: %w", err)
	}
	m.Members = make([]*rfm.Model, k)
	for i := range m.Members {
		mm, _, err := rfm.FromFile(&modelfile.File{Kind: rfm.FileKind, Meta: meta.MemberMeta[i], Arrays: byMember[i]})
		if err != nil {
			return nil, nil, fmt.Errorf("ensemble file: member %d: %w", i, err)
		}
		m.Members[i] = mm
	}
	if err := m.Check(); err != nil {
		return nil, nil, fmt.Errorf("ensemble file: %w", err)
	}
	return m, meta.Extra, nil
}
