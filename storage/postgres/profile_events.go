package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// ProfileUpdate is the change `aviary admin user update` makes: nil fields
// stay as they are (docs/activity.md, "Events and delivery").
type ProfileUpdate struct {
	// Bio is the description, Name the display name (screenname), Handle
	// the username, Geo the location, Picture the profile image URL.
	Bio, Name, Handle, URL, Geo, Picture *string
	Verified                             *bool
	// Banner is the profile banner URL, Affiliate the affiliate badge
	// (migration 0039; profile_banner.go).
	Banner    *string
	Affiliate *bool
}

// UpdateUserProfile applies change to user id and appends, in the same
// transaction, one profile.update.* event per field whose value changed
// (before/after), made by the user (app 0). It returns the user and the
// event types written, in the order of the fields above. An unknown user is
// storage.ErrNotFound; a handle another user holds is storage.ErrConflict.
func (db *DB) UpdateUserProfile(ctx context.Context, id int64, change ProfileUpdate) (storage.User, []events.Type, error) {
	var out storage.User
	var types []events.Type
	err := db.inTx(ctx, fmt.Sprintf("update profile of user %d", id), func(tx pgx.Tx) error {
		before, err := scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		out, err = scanUser(tx.QueryRow(ctx, `UPDATE users u SET
				description = COALESCE($2, description), name = COALESCE($3, name), username = COALESCE($4, username),
				url = COALESCE($5, url), location = COALESCE($6, location), profile_image_url = COALESCE($7, profile_image_url),
				verified = COALESCE($8, verified)
			WHERE u.id = $1 RETURNING `+userColumns,
			id, change.Bio, change.Name, change.Handle, change.URL, change.Geo, change.Picture, change.Verified))
		if err != nil {
			return err
		}
		evs := profileEvents(before, out)
		more, err := updateBannerAndBadge(ctx, tx, id, change)
		if err != nil {
			return err
		}
		evs = append(evs, more...)
		for _, e := range evs {
			types = append(types, e.typ)
		}
		return appendEvents(ctx, tx, evs...)
	})
	return out, types, err
}

// profileEvents are the profile.update.* events of the change from before
// to after, one per changed field.
func profileEvents(before, after storage.User) []newEvent {
	var out []newEvent
	add := func(typ events.Type, b, a any) {
		if b != a {
			out = append(out, newEvent{typ: typ, user: after.ID, subject: after.ID,
				payload: events.ProfileUpdated{UserID: after.ID, Before: b, After: a}})
		}
	}
	add(events.ProfileUpdateBio, before.Description, after.Description)
	add(events.ProfileUpdateScreenname, before.Name, after.Name)
	add(events.ProfileUpdateHandle, before.Username, after.Username)
	add(events.ProfileUpdateURL, before.URL, after.URL)
	add(events.ProfileUpdateGeo, before.Location, after.Location)
	add(events.ProfileUpdatePicture, before.ProfileImageURL, after.ProfileImageURL)
	add(events.ProfileUpdateVerifiedBadge, strconv.FormatBool(before.Verified), strconv.FormatBool(after.Verified))
	return out
}
