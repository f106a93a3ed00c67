package workspace

import (
	"encoding/json"
	"fmt"
	"io/fs"
)

// savedEntry is an entry as Encode writes it.
type savedEntry struct {
	Name    string      `json:"name"`
	Kind    kind        `json:"kind"`
	Data    []byte      `json:"data,omitempty"`
	Mode    fs.FileMode `json:"mode"`
	Link    string      `json:"link,omitempty"`
	Created []string    `json:"created,omitempty"`
}

// Encode writes the snapshot down, so that another executor can restore it after this one
// stopped in the middle of a job (Decode).
func (s *Snapshot) Encode() ([]byte, error) {
	out := make([]savedEntry, len(s.entries))
	for i, e := range s.entries {
		out[i] = savedEntry{Name: e.name, Kind: e.kind, Data: e.data, Mode: e.mode, Link: e.link, Created: e.created}
	}
	return json.Marshal(out)
}

// Decode reads a snapshot Encode wrote, to be restored in this workspace.
func (w *Workspace) Decode(data []byte) (*Snapshot, error) {
	var in []savedEntry
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s := &Snapshot{root: w.root}
	for _, e := range in {
		if e.Kind < kindMissing || e.Kind > kindDir {
			return nil, fmt.Errorf("snapshot: %s: unknown kind %d", e.Name, e.Kind)
		}
		s.entries = append(s.entries, entry{name: e.Name, kind: e.Kind, data: e.Data, mode: e.Mode, link: e.Link, created: e.Created})
	}
	return s, nil
}
