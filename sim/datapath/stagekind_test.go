package datapath

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// Every stage of every path has a kind from the vocabulary; a stage name
// means the same kind of work on every path it appears on, so figures and
// comparisons can line paths up by name or by kind.
func TestStageVocabulary(t *testing.T) {
	known := map[StageKind]bool{}
	for _, k := range StageKinds {
		if known[k.Kind] {
			t.Errorf("kind %q listed twice", k.Kind)
		}
		if k.Label == "" {
			t.Errorf("kind %q has no label", k.Kind)
		}
		known[k.Kind] = true
	}
	kindOf := map[string]StageKind{}
	for _, path := range KnownPaths {
		seen := map[string]bool{}
		stages := stagesOf(path)
		if len(stages) == 0 {
			t.Fatalf("path %s has no pipeline", path)
		}
		for _, st := range stages {
			if !known[st.kind] {
				t.Errorf("%s: stage %q has kind %q, not in StageKinds", path, st.name, st.kind)
			}
			if seen[st.name] {
				t.Errorf("%s: stage %q twice in one pipeline", path, st.name)
			}
			seen[st.name] = true
			if k, ok := kindOf[st.name]; ok && k != st.kind {
				t.Errorf("stage %q is %q on %s but %q elsewhere", st.name, st.kind, path, k)
			}
			kindOf[st.name] = st.kind
		}
		// Every path starts its request on the wire under one name (the
		// review found "net+tcp-rx", "net" and "reply-net" for two things).
		if !seen["network"] || !seen["reply"] {
			t.Errorf("%s: want stages named network and reply, have %v", path, seen)
		}
	}
}

// The pending-event set changes speed only: the default scenario's four
// paths give the same result, record for record, on every queue kind
// (EventQueue is chosen by speed alone).
func TestSameResultOnEveryQueue(t *testing.T) {
	defer func(k engine.QueueKind) { EventQueue = k }(EventQueue)
	cfg := Defaults()
	cfg.Clients.Requests = 300
	var want string
	for i, k := range engine.QueueKinds {
		EventQueue = k
		res, err := Run(cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := res.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(res)
		got := b.String() + string(js)
		if i == 0 {
			want = got
		} else if got != want {
			t.Errorf("queue %s gives another result than %s", k, engine.QueueKinds[0])
		}
	}
}
