package main

import (
	"context"
	"fmt"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// updateUser changes the profile fields given of --user and prints the
// user with the profile.update.* event types written, one per changed
// field (docs/activity.md, "Events and delivery"). The change is
// announced: the credential caches keep the authenticated user.
func updateUser(ctx context.Context, db *postgres.DB, ann *announcer, o adminFlags) (any, error) {
	if o.User == "" {
		return nil, fmt.Errorf("--user is required")
	}
	change, err := profileUpdate(o)
	if err != nil {
		return nil, err
	}
	u, err := findUser(ctx, db, o.User)
	if err != nil {
		return nil, err
	}
	u, types, err := db.UpdateUserProfile(ctx, u.ID, change)
	if err != nil {
		return nil, err
	}
	if len(types) > 0 {
		ann.announce(ctx, func(ctx context.Context, p *auth.Publisher) error { return p.UserChanged(ctx, u.ID) })
	}
	events := make([]string, len(types))
	for i, t := range types {
		events[i] = string(t)
	}
	banner, affiliate, err := db.UserBannerAndBadge(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"user_id": ids.Format(u.ID), "username": u.Username, "name": u.Name,
		"description": u.Description, "url": u.URL, "location": u.Location, "profile_image_url": u.ProfileImageURL,
		"verified": u.Verified, "profile_banner_url": banner, "affiliate": affiliate, "events": events}, nil
}

// profileUpdate reads user update's flags: only those given change.
func profileUpdate(o adminFlags) (postgres.ProfileUpdate, error) {
	var c postgres.ProfileUpdate
	c.Bio, c.Handle, c.URL, c.Geo, c.Picture = o.Bio.ptr(), o.Handle.ptr(), o.URL.ptr(), o.Location.ptr(), o.Image.ptr()
	if o.Given["name"] {
		name := o.Name
		c.Name = &name
	}
	if c.Handle != nil && *c.Handle == "" {
		return c, fmt.Errorf("--handle: a username can not be empty")
	}
	for _, f := range []struct {
		name  string
		value *string
	}{{"--url", c.URL}, {"--image", c.Picture}} {
		if f.value != nil && *f.value != "" && !webURL(*f.value) {
			return c, fmt.Errorf("%s %q: want an http or https URL (or \"\" to clear it)", f.name, *f.value)
		}
	}
	if err := bannerAndBadge(o.Live, &c); err != nil {
		return c, err
	}
	if o.Verified.set {
		on, err := parseOnOff(o.Verified.value)
		if err != nil {
			return c, fmt.Errorf("--verified: %w", err)
		}
		c.Verified = &on
	}
	return c, nil
}
