package adstest_test

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// populateCards gives the account n cards of each kind (the third
// component cards marked deleted) and names the first component card's
// id card_id.
func populateCards(t testing.TB, conn *pgxpool.Pool, acct string, ids map[string]string, n int) {
	t.Helper()
	kinds := []struct{ kind, cardType, body string }{
		{"component", "IMAGE_WEBSITE", `{"components":[{"type":"MEDIA","media_key":"3_1"},{"type":"DETAILS","title":"t","destination":{"type":"WEBSITE","url":"https://x.test"}}]}`},
		{"poll", "TEXT_POLLS", `{"choices":["a","b"],"duration_in_minutes":5,"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T00:05:00Z"}`},
		{"video_conversation", "VIDEO_CONVERSATION", `{"ctas":["#a","","",""],"cta_tweets":["a","","",""],"thank_you_text":"t","title":"t","media":{"key":"13_1","kind":"video","width":1280,"height":720}}`},
		{"image_conversation", "IMAGE_CONVERSATION", `{"ctas":["#a","","",""],"cta_tweets":["a","","",""],"thank_you_text":"t","title":"t","media":{"key":"3_1","kind":"photo","width":1200,"height":628}}`},
	}
	for _, k := range kinds {
		for i := 0; i < n; i++ {
			id := sqlID(t, conn, `INSERT INTO ads_cards (id, account_id, kind, card_type, card_uri, name, body, deleted_at)
				SELECT x.id, $1, $2, $3, 'card://' || x.id, $4, $5::jsonb, CASE WHEN $6 THEN now() END
				FROM (SELECT aviary_ads_id() AS id) x RETURNING id`,
				acct, k.kind, k.cardType, fmt.Sprintf("%s card %d", k.kind, i), k.body, k.kind == "component" && i == 2)
			if i == 0 && k.kind == "component" {
				ids["card_id"] = id
			}
		}
	}
}
