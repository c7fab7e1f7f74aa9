package tasks

import (
	"slices"
	"testing"
)

func TestQueuesHaveWeights(t *testing.T) {
	weights := map[string]int{}
	for _, q := range Queues() {
		if _, dup := weights[q.Name]; dup {
			t.Errorf("queue %s listed twice", q.Name)
		}
		weights[q.Name] = q.Weight
	}
	for _, q := range []string{QueueDefault, QueueCompliance, QueueMedia, QueueAudiences, QueueCatalogs, QueueInsights, QueueWebhooks} {
		if weights[q] < 1 {
			t.Errorf("queue %s has weight %d", q, weights[q])
		}
		if !IsQueue(q) {
			t.Errorf("IsQueue(%q) = false", q)
		}
	}
	if len(weights) != 7 {
		t.Errorf("Queues() lists %d queues, want the 7 Queue* constants: %v", len(weights), weights)
	}
	if IsQueue("nope") || IsQueue("") {
		t.Error("IsQueue accepts a name that is no queue")
	}
}

func TestQueuesSortedByName(t *testing.T) {
	var names []string
	for _, q := range Queues() {
		names = append(names, q.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("Queues() names %v, want them sorted", names)
	}
}

// TestQueuesCannotBeChanged: a caller changing what Queues returned changes
// neither the next call's answer nor IsQueue.
func TestQueuesCannotBeChanged(t *testing.T) {
	want := Queues()
	got := Queues()
	for i := range got {
		got[i] = Queue{Name: "changed", Weight: 99}
	}
	_ = append(got[:0], Queue{Name: "added", Weight: 7})
	if again := Queues(); !slices.Equal(again, want) {
		t.Errorf("after a caller changed its copy, Queues() = %v, want %v", again, want)
	}
	if IsQueue("changed") || IsQueue("added") || !IsQueue(QueueMedia) {
		t.Error("a caller's change to its copy reached IsQueue")
	}
}
