// Package posts holds the post operations both tiers share (docs/events.md):
// composing a post from its text (entities, language, mentioned users),
// creating, editing and deleting it. Each store call is one transaction
// that also appends the change's events to the log, so every caller (the
// API's POST /2/tweets and DELETE /2/tweets/{id}, ads posts and admin tools
// next) writes the same records and the same events. HTTP stays with the
// callers: they decode requests, apply the refusals that depend on the
// caller's app or on visibility, and map the errors here onto answers.
package posts

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access the operations need (storage/postgres.DB).
type Store interface {
	UsersByUsernames(ctx context.Context, names []string) ([]storage.User, error)
	CreatePost(ctx context.Context, p storage.Post) (storage.Post, error)
	EditPost(ctx context.Context, previousID int64, p storage.Post, now time.Time) (storage.Post, error)
	PostByID(ctx context.Context, id int64) (storage.Post, error)
	DeletePost(ctx context.Context, id int64, at time.Time) (storage.Post, error)
}

// ErrNotAuthor is Delete's refusal of a post the user did not author.
var ErrNotAuthor = errors.New("not the post's author")

// Compose returns the post authorID writes with app (appID, appName) as
// text: its entities (posttext.Extract) and detected language. The caller
// resolves the mentions (ResolveMentions, once its own checks of the
// entities passed) and adds media, place and references.
func Compose(authorID, appID int64, appName, text string) storage.Post {
	return storage.Post{AuthorID: authorID, AppID: appID, Text: text, Source: appName,
		Lang: posttext.DetectLanguage(text), Entities: posttext.Extract(text)}
}

// ResolveMentions fills in the ids of mentioned users who exist (by
// username, case-insensitively); the others keep id 0.
func ResolveMentions(ctx context.Context, store Store, e *storage.Entities) error {
	if len(e.Mentions) == 0 {
		return nil
	}
	names := make([]string, len(e.Mentions))
	for i, mn := range e.Mentions {
		names[i] = mn.Username
	}
	users, err := store.UsersByUsernames(ctx, names)
	if err != nil {
		return fmt.Errorf("resolve mentions: %w", err)
	}
	byName := make(map[string]int64, len(users))
	for _, u := range users {
		byName[strings.ToLower(u.Username)] = u.ID
	}
	for i := range e.Mentions {
		e.Mentions[i].UserID = byName[strings.ToLower(e.Mentions[i].Username)]
	}
	return nil
}

// Create stores post and appends its post.create event in the same
// transaction. A parent or quoted post that went away meanwhile is
// storage.ErrNotFound.
func Create(ctx context.Context, store Store, post storage.Post) (storage.Post, error) {
	return store.CreatePost(ctx, post)
}

// Edit stores draft as the version after previousID at now and appends its
// post.create event (EditOfID set). A chain that may no longer be edited
// is a storage.EditRefusal.
func Edit(ctx context.Context, store Store, previousID int64, draft storage.Post, now time.Time) (storage.Post, error) {
	post, err := store.EditPost(ctx, previousID, draft, now)
	if err != nil {
		return storage.Post{}, fmt.Errorf("edit post %d: %w", previousID, err)
	}
	return post, nil
}

// Delete deletes userID's post postID at now, every version of its chain
// and its reposts, appending a post.delete event for each. An unknown or
// already deleted post is storage.ErrNotFound (also when deleted
// concurrently), another user's ErrNotAuthor.
func Delete(ctx context.Context, store Store, userID, postID int64, now time.Time) (storage.Post, error) {
	post, err := store.PostByID(ctx, postID)
	if err == nil && post.DeletedAt != nil {
		err = storage.ErrNotFound
	}
	if err != nil {
		return storage.Post{}, fmt.Errorf("load post %d: %w", postID, err)
	}
	if post.AuthorID != userID {
		return storage.Post{}, fmt.Errorf("delete post %d for user %d: %w", postID, userID, ErrNotAuthor)
	}
	deleted, err := store.DeletePost(ctx, postID, now)
	if err != nil {
		return storage.Post{}, fmt.Errorf("delete post %d: %w", postID, err)
	}
	return deleted, nil
}
