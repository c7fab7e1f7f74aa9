package storage

import (
	"errors"
	"time"
)

// StreamRule is one filtered-stream rule of an app (docs/streams-rules.md).
type StreamRule struct {
	ID        int64
	AppID     int64
	Value     string
	Tag       string
	CreatedAt time.Time
}

// ErrStreamRuleCap reports an add that would take an app over its rule
// cap; nothing was added.
var ErrStreamRuleCap = errors.New("stream rule cap reached")

// StreamRuleAdd asks to add rules to an app: all of them, except those
// whose value the app already has (or that repeat an earlier value of the
// same request), or none when the app would hold more than Max rules.
// DryRun reports what would happen and changes nothing.
type StreamRuleAdd struct {
	AppID  int64
	Rules  []NewStreamRule
	Max    int
	DryRun bool
}

// NewStreamRule is a rule to add.
type NewStreamRule struct {
	Value string
	Tag   string
}

// StreamRuleDuplicate is a rule of an add that was not created because
// the app already has (or the request already adds) a rule of its value:
// Index is its place in the request, Existing that rule.
type StreamRuleDuplicate struct {
	Index    int
	Existing StreamRule
}

// StreamRulesAdded is the outcome of an add: the rules created (in request
// order) and the duplicates.
type StreamRulesAdded struct {
	Created    []StreamRule
	Duplicates []StreamRuleDuplicate
}

// StreamRuleDelete asks to delete rules of an app: those with one of IDs
// or Values, or every one when All. DryRun changes nothing.
type StreamRuleDelete struct {
	AppID  int64
	IDs    []int64
	Values []string
	All    bool
	DryRun bool
}

// StreamRuleFilter lists an app's rules in id order: only IDs when set,
// after the id After, at most Limit (0: all).
type StreamRuleFilter struct {
	AppID int64
	IDs   []int64
	After int64
	Limit int
}
