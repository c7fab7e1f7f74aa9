package postgres

import (
	"context"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
)

// updateBannerAndBadge applies change's banner and affiliate badge (the
// users columns of migration 0039) to user id, in tx, and returns their
// profile.update.banner_picture and .affiliate_badge events, one per
// changed value (the badge's before/after are "true"/"false", as the
// verified badge's).
func updateBannerAndBadge(ctx context.Context, tx pgx.Tx, id int64, change ProfileUpdate) ([]newEvent, error) {
	if change.Banner == nil && change.Affiliate == nil {
		return nil, nil
	}
	var banner, newBanner string
	var badge, newBadge bool
	err := tx.QueryRow(ctx, `WITH old AS (SELECT profile_banner_url, affiliate_badge FROM users WHERE id = $1)
		UPDATE users u SET profile_banner_url = COALESCE($2, u.profile_banner_url), affiliate_badge = COALESCE($3, u.affiliate_badge)
		FROM old WHERE u.id = $1
		RETURNING old.profile_banner_url, old.affiliate_badge, u.profile_banner_url, u.affiliate_badge`,
		id, change.Banner, change.Affiliate).Scan(&banner, &badge, &newBanner, &newBadge)
	if err != nil {
		return nil, err
	}
	var out []newEvent
	add := func(typ events.Type, b, a string) {
		if b != a {
			out = append(out, newEvent{typ: typ, user: id, subject: id, payload: events.ProfileUpdated{UserID: id, Before: b, After: a}})
		}
	}
	add(events.ProfileUpdateBanner, banner, newBanner)
	add(events.ProfileUpdateAffiliateBadge, strconv.FormatBool(badge), strconv.FormatBool(newBadge))
	return out, nil
}

// UserBannerAndBadge returns user id's profile banner URL and affiliate
// badge.
func (db *DB) UserBannerAndBadge(ctx context.Context, id int64) (string, bool, error) {
	var banner string
	var badge bool
	err := db.pool.QueryRow(ctx, `SELECT profile_banner_url, affiliate_badge FROM users WHERE id = $1`, id).Scan(&banner, &badge)
	return banner, badge, wrap("load banner of user "+strconv.FormatInt(id, 10), err)
}
