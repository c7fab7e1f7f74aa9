package storage_test

import (
	"slices"
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

func TestPlacementCombinations(t *testing.T) {
	for _, pt := range storage.PlacementProductTypes {
		combos := storage.PlacementCombinations(pt)
		if len(combos) == 0 {
			t.Errorf("%s has no placement combinations", pt)
		}
		for _, c := range combos {
			if !slices.IsSorted(c) {
				t.Errorf("%s: combination %v is not sorted", pt, c)
			}
			for _, p := range c {
				if !slices.Contains(storage.PlacementValues, p) {
					t.Errorf("%s: unknown placement %s", pt, p)
				}
			}
			if slices.Equal(c, []string{storage.PlacementServiceProfile}) {
				t.Errorf("%s: the profile placement alone is listed", pt)
			}
		}
	}
	if got := storage.PlacementCombinations("SPONSORED"); got != nil {
		t.Errorf("unknown product type: %v, want nil", got)
	}
	storage.PlacementCombinations("MEDIA")[0][0] = "CHANGED"
	if storage.PlacementCombinations("MEDIA")[0][0] == "CHANGED" {
		t.Error("PlacementCombinations returns the table itself")
	}
}

func TestPlacementsAllowed(t *testing.T) {
	tests := []struct {
		product    string
		placements []string
		want       bool
	}{
		{"PROMOTED_TWEETS", []string{"ALL_ON_SERVICE"}, true},
		{"PROMOTED_TWEETS", []string{"SERVICE_TIMELINE", "SERVICE_SEARCH"}, true},
		{"PROMOTED_TWEETS", []string{"SERVICE_TIMELINE", "SERVICE_PROFILE", "SERVICE_SEARCH"}, true},
		{"PROMOTED_TWEETS", []string{"SERVICE_PROFILE"}, false},
		{"PROMOTED_TWEETS", []string{"SERVICE_TIMELINE", "SERVICE_TIMELINE"}, false},
		{"PROMOTED_TWEETS", []string{"ALL_ON_SERVICE", "SERVICE_TIMELINE"}, false},
		{"PROMOTED_TWEETS", nil, false},
		{"PROMOTED_ACCOUNT", []string{"SERVICE_TIMELINE"}, true},
		{"PROMOTED_ACCOUNT", []string{"PUBLISHER_NETWORK"}, false},
		{"MEDIA", []string{"PUBLISHER_NETWORK", "ALL_ON_SERVICE"}, true},
		{"MEDIA", []string{"SERVICE_SEARCH"}, false},
		{"SPONSORED", []string{"ALL_ON_SERVICE"}, false},
	}
	for _, tt := range tests {
		if got := storage.PlacementsAllowed(tt.product, tt.placements); got != tt.want {
			t.Errorf("PlacementsAllowed(%s, %v) = %v, want %v", tt.product, tt.placements, got, tt.want)
		}
	}
}
