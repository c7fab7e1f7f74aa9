package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/postgres"

	postops "github.com/aviary-dev/aviary/ops/posts"
)

// Sizes of the seed fixture.
const (
	seedUsers       = 12
	seedPosts       = 60
	seedAdAccounts  = 3
	seedCampaigns   = 2 // per account
	seedLineItems   = 2 // per campaign
	seedMaxLikes    = 6 // per post
	seedMinFollows  = 2 // per user
	seedMaxFollows  = 6
	seedReplyChance = 4 // one post in this many replies to an earlier one
)

var (
	seedFirst    = []string{"ada", "grace", "linus", "margaret", "ken", "barbara", "dennis", "radia", "alan", "frances", "edsger", "hedy", "john", "katherine"}
	seedLast     = []string{"lovelace", "hopper", "torvalds", "hamilton", "thompson", "liskov", "ritchie", "perlman", "turing", "allen", "dijkstra", "lamarr"}
	seedPlaces   = []string{"Berlin", "Lagos", "Lima", "Osaka", "Toronto", "Lyon", "Pune", "Austin"}
	seedTopics   = []string{"golang", "aviary", "coffee", "testing", "opensource", "distributedsystems", "birds", "api", "postgres", "weekend"}
	seedPhrases  = []string{"Shipping a new release today", "Reading about", "Hot take on", "Spent the morning with", "Anyone else excited about", "A thread on", "Lessons learned from", "Small wins with"}
	seedAdjs     = []string{"fast", "boring", "delightful", "surprising", "tiny", "well-tested"}
	seedCampaign = []string{"Spring launch", "Brand awareness", "Developer reach", "Retargeting", "Holiday promo"}
)

// seedResult is what seed prints.
type seedResult struct {
	Seed        int64    `json:"seed"`
	App         string   `json:"app"`
	Users       []string `json:"users"`
	Posts       int      `json:"posts"`
	Media       int      `json:"media"`       // photos attached to posts
	MediaPosts  []string `json:"media_posts"` // ids of the posts with photos, oldest first
	Likes       int      `json:"likes"`
	Follows     int      `json:"follows"`
	AdAccounts  []string `json:"ad_accounts"`
	Campaigns   int      `json:"campaigns"`
	LineItems   int      `json:"line_items"`
	OldestPost  string   `json:"oldest_post_at"`
	NewestPosts string   `json:"newest_post_at"`
}

// seeder builds the fixture with one random source: the same seed makes
// the same users, texts, graph and ads, at the same offsets from now; a
// second one (mrnd) draws the photos, so the same seed makes the same
// image bytes.
type seeder struct {
	db    *postgres.DB
	blobs blob.Store
	rnd   *rand.Rand
	mrnd  *rand.Rand
	now   time.Time
	out   seedResult
}

// seedState adds the seed fixture (docs/state.md, "Seed"); the photos'
// files go to blobs.
func seedState(ctx context.Context, db *postgres.DB, blobs blob.Store, seed int64) (seedResult, error) {
	s := &seeder{db: db, blobs: blobs, rnd: rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x5eed)), mrnd: newMediaRand(seed),
		now: time.Now().UTC().Truncate(time.Second), out: seedResult{Seed: seed}}
	app, err := db.CreateApp(ctx, fmt.Sprintf("aviary-seed-%d", seed), "")
	if errors.Is(err, storage.ErrConflict) {
		return seedResult{}, fmt.Errorf("seed %d was already applied here (its app exists); reset first or pick another --seed", seed)
	}
	if err != nil {
		return seedResult{}, err
	}
	s.out.App = app.Name
	users, err := s.users(ctx, seed)
	if err != nil {
		return seedResult{}, err
	}
	if err := s.follows(ctx, users); err != nil {
		return seedResult{}, err
	}
	if err := s.posts(ctx, app, users); err != nil {
		return seedResult{}, err
	}
	if err := s.ads(ctx, users); err != nil {
		return seedResult{}, err
	}
	return s.out, nil
}

func (s *seeder) pick(list []string) string { return list[s.rnd.IntN(len(list))] }

func (s *seeder) users(ctx context.Context, seed int64) ([]storage.User, error) {
	var users []storage.User
	for i := range seedUsers {
		first, last := s.pick(seedFirst), s.pick(seedLast)
		// At most 6+1+4+4 characters: handles are 15 at most.
		username := fmt.Sprintf("%s_%s%d", first[:min(len(first), 6)], last[:min(len(last), 4)], seed%100*100+int64(i))
		u, err := s.db.CreateUser(ctx, username, titleCase(first)+" "+titleCase(last))
		if err != nil {
			return nil, fmt.Errorf("seed user %s: %w", username, err)
		}
		topic := s.pick(seedTopics)
		desc := fmt.Sprintf("Builds %s things. Talks about #%s. Opinions my own.", s.pick(seedAdjs), topic)
		loc, site := s.pick(seedPlaces), "https://example.com/"+username
		if u, err = s.db.SetUserProfile(ctx, u.ID, postgres.ProfileChange{Description: &desc, Location: &loc, URL: &site}); err != nil {
			return nil, fmt.Errorf("seed profile of %s: %w", username, err)
		}
		users = append(users, u)
		s.out.Users = append(s.out.Users, u.Username)
	}
	return users, nil
}

func (s *seeder) follows(ctx context.Context, users []storage.User) error {
	for _, u := range users {
		n := seedMinFollows + s.rnd.IntN(seedMaxFollows-seedMinFollows+1)
		for _, j := range s.rnd.Perm(len(users))[:n] {
			if users[j].ID == u.ID {
				continue
			}
			if _, err := s.db.Follow(ctx, 0, u.ID, users[j].ID); err != nil {
				return fmt.Errorf("seed follow %s -> %s: %w", u.Username, users[j].Username, err)
			}
			s.out.Follows++
		}
	}
	return nil
}

// posts writes seedPosts posts spread over the past week, oldest first,
// with hashtags, mentions, some replies, photos on every seedMediaEvery-th,
// and likes.
func (s *seeder) posts(ctx context.Context, app storage.App, users []storage.User) error {
	week := 7 * 24 * time.Hour
	offsets := make([]time.Duration, seedPosts)
	for i := range offsets {
		offsets[i] = time.Duration(s.rnd.Int64N(int64(week - time.Hour)))
	}
	// Oldest first, so that replies follow their parents.
	for i := range offsets {
		for j := i + 1; j < len(offsets); j++ {
			if offsets[j] > offsets[i] {
				offsets[i], offsets[j] = offsets[j], offsets[i]
			}
		}
	}
	var made []storage.Post
	for i := range seedPosts {
		author := users[s.rnd.IntN(len(users))]
		text := fmt.Sprintf("%s #%s, %s and #%s", s.pick(seedPhrases), s.pick(seedTopics), s.pick(seedAdjs), s.pick(seedTopics))
		if s.rnd.IntN(2) == 0 {
			text += " cc @" + users[s.rnd.IntN(len(users))].Username
		}
		post := postops.Compose(author.ID, app.ID, app.Name, text)
		if len(made) > 0 && s.rnd.IntN(seedReplyChance) == 0 {
			parent := made[s.rnd.IntN(len(made))]
			post.InReplyToPostID, post.InReplyToUserID = parent.ID, parent.AuthorID
		}
		if err := postops.ResolveMentions(ctx, s.db, &post.Entities); err != nil {
			return err
		}
		at := s.now.Add(-offsets[i])
		media, err := s.photos(ctx, i, app, author, at.Add(-time.Minute))
		if err != nil {
			return err
		}
		post.MediaIDs = media
		p, err := postops.Create(ctx, s.db, post)
		if err != nil {
			return fmt.Errorf("seed post %d: %w", i, err)
		}
		if len(media) > 0 {
			s.out.MediaPosts = append(s.out.MediaPosts, strconv.FormatInt(p.ID, 10))
		}
		if err := s.db.BackdatePost(ctx, p.ID, at); err != nil {
			return err
		}
		if i == 0 {
			s.out.OldestPost = at.Format(time.RFC3339)
		}
		s.out.NewestPosts = at.Format(time.RFC3339)
		made = append(made, p)
		for _, j := range s.rnd.Perm(len(users))[:s.rnd.IntN(seedMaxLikes+1)] {
			liked, err := s.db.Like(ctx, users[j].ID, p.ID)
			if err != nil {
				return fmt.Errorf("seed like of post %d: %w", p.ID, err)
			}
			if liked {
				s.out.Likes++
			}
		}
	}
	s.out.Posts = len(made)
	return nil
}

// ads gives the first users an ads account each, with a funding
// instrument, campaigns and line items.
func (s *seeder) ads(ctx context.Context, users []storage.User) error {
	for i := range min(seedAdAccounts, len(users)) {
		owner := users[i]
		acct, err := s.db.CreateAdAccount(ctx, owner.ID, titleCase(strings.Split(owner.Username, "_")[0])+" Ads", false)
		if err != nil {
			return fmt.Errorf("seed ad account of %s: %w", owner.Username, err)
		}
		s.out.AdAccounts = append(s.out.AdAccounts, acct.ID)
		funded := int64(500_000_000) * int64(1+s.rnd.IntN(10))
		fi, err := s.db.CreateFundingInstrument(ctx, acct.ID, storage.NewFundingInstrument{Name: "Card ending 4242",
			Type: "CREDIT_CARD", Currency: "USD", FundedAmountLocalMicro: &funded})
		if err != nil {
			return fmt.Errorf("seed funding instrument of %s: %w", acct.ID, err)
		}
		for range seedCampaigns {
			daily := int64(10_000_000) * int64(1+s.rnd.IntN(20))
			c, err := s.db.CreateCampaign(ctx, owner.ID, storage.NewCampaign{AccountID: acct.ID, FundingInstrumentID: fi.ID,
				Name: s.pick(seedCampaign), EntityStatus: "PAUSED", BudgetOptimization: "LINE_ITEM", DailyBudget: &daily})
			if err != nil {
				return fmt.Errorf("seed campaign of %s: %w", acct.ID, err)
			}
			s.out.Campaigns++
			for k := range seedLineItems {
				if err := s.lineItem(ctx, owner, c, k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (s *seeder) lineItem(ctx context.Context, owner storage.User, c storage.Campaign, k int) error {
	name := fmt.Sprintf("%s line item %d", c.Name, k+1)
	bid := int64(1_000_000) * int64(1+s.rnd.IntN(5))
	goal := "ENGAGEMENT"
	_, err := s.db.CreateLineItem(ctx, owner.ID, c.AccountID, c.ID, func(camp storage.LineItemCampaign) (storage.LineItem, error) {
		return storage.LineItem{Name: &name, Currency: "USD", Objective: "ENGAGEMENTS", ProductType: "PROMOTED_TWEETS",
			Placements: []string{"ALL_ON_SERVICE"}, Goal: &goal, BidStrategy: "MAX", BidAmountLocalMicro: &bid,
			EntityStatus: "PAUSED", CreativeSource: "MANUAL"}, nil
	})
	if err != nil {
		return fmt.Errorf("seed line item of campaign %s: %w", c.ID, err)
	}
	s.out.LineItems++
	return nil
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
