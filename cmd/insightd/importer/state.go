package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// IDMaps maps each kind's source ids to the target's.
type IDMaps struct {
	mu   sync.Mutex
	Maps map[Kind]map[string]int64 `json:"maps"`
}

// Get is the target id of a source id.
func (m *IDMaps) Get(k Kind, id int64) (int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	to, ok := m.Maps[k][strconv.FormatInt(id, 10)]
	return to, ok
}

// Set records a copy.
func (m *IDMaps) Set(k Kind, from, to int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Maps == nil {
		m.Maps = map[Kind]map[string]int64{}
	}
	if m.Maps[k] == nil {
		m.Maps[k] = map[string]int64{}
	}
	m.Maps[k][strconv.FormatInt(from, 10)] = to
}

// Cursor is the last event sent and acknowledged, in the order the
// source is read (timestamp, then uuid).
type Cursor struct {
	Timestamp string `json:"timestamp"`
	UUID      string `json:"uuid"`
	Done      int64  `json:"done"`
}

// State is the checkpoint: what a run has copied, so that the next run
// (after an interruption, or a re-run) continues instead of starting over.
type State struct {
	path string
	// Source and Target say which projects the checkpoint is about: a
	// checkpoint of other projects is refused rather than misapplied.
	Source string `json:"source"`
	Target string `json:"target"`
	IDMaps
	Events Cursor `json:"events"`
	// Files are the files imported with --file, by path, and the lines
	// (or rows) of each already sent.
	Files map[string]int64 `json:"files,omitempty"`
}

// LoadState reads the checkpoint at path, or starts one when there is
// none; a checkpoint of other projects is an error.
func LoadState(path, source, target string) (*State, error) {
	s := &State{path: path, Source: source, Target: target}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("checkpoint %s cannot be read (%v); remove it to start over", path, err)
	}
	if s.Source != source || s.Target != target {
		return nil, fmt.Errorf("checkpoint %s is of an import from %s to %s, not from %s to %s; pass another --checkpoint",
			path, s.Source, s.Target, source, target)
	}
	s.path = path
	return s, nil
}

// Save writes the checkpoint atomically (a temporary file renamed over
// it), so an interruption leaves the old one or the new one.
func (s *State) Save() error {
	if s.path == "" {
		return nil
	}
	s.mu.Lock()
	b, err := json.MarshalIndent(s, "", "  ")
	s.mu.Unlock()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".import-checkpoint-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// Path is where the checkpoint is kept.
func (s *State) Path() string { return s.path }

func (s *State) fileDone(path string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Files[path]
}

func (s *State) setFileDone(path string, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Files == nil {
		s.Files = map[string]int64{}
	}
	s.Files[path] = n
}
