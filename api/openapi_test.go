package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// openapiCase is one request whose response must match the platform's
// OpenAPI description. Placeholders (in paths and bodies): {job} (a created
// tweets job), {complete}, {failed} (jobs in those states), {post} (the
// author's post, deleted by the case that expects 200), {kept} (another
// post of the author), {upload} (the author's media upload, taking
// segments), {finalizable} (one whose segments are complete), {media} (the
// author's processed photo), {rule} (a stream rule of the first app).
// authz is as in apitest.Bundle.Call, with "bearer" and "other" for the two
// apps' bearer tokens. limited cases run on a bundle whose rate limits admit
// one request per window: the request is sent twice and the second answer
// checked.
type openapiCase struct {
	name, method, path, authz, body string
	status                          int
	limited                         bool
}

// openapiCases drive every response shape of the endpoints served so far.
// A new endpoint adds its lines here.
var openapiCases = []openapiCase{
	// POST /2/compliance/jobs
	{name: "create job", method: "POST", path: "/2/compliance/jobs", authz: "bearer", body: `{"type":"tweets","name":"nightly","resumable":true}`, status: 200},
	{name: "create job with fields", method: "POST", path: "/2/compliance/jobs?compliance_job.fields=id,status", authz: "bearer", body: `{"type":"tweets"}`, status: 200},
	{name: "create job: invalid type", method: "POST", path: "/2/compliance/jobs", authz: "bearer", body: `{"type":"likes"}`, status: 400},
	{name: "create job: invalid UTF-8 name", method: "POST", path: "/2/compliance/jobs", authz: "bearer", body: "{\"type\":\"tweets\",\"name\":\"\xff\"}", status: 400},
	{name: "create job: no credentials", method: "POST", path: "/2/compliance/jobs", body: `{"type":"users"}`, status: 401},
	{name: "create job: user context", method: "POST", path: "/2/compliance/jobs", authz: "oauth:reader", body: `{"type":"users"}`, status: 403},
	{name: "create job: one in progress", method: "POST", path: "/2/compliance/jobs", authz: "bearer", body: `{"type":"users"}`, status: 409},
	{name: "create job: body too large", method: "POST", path: "/2/compliance/jobs", authz: "bearer", body: `{"type":"users","name":"` + strings.Repeat("n", 2<<20) + `"}`, status: 413},
	{name: "create job: rate limited", method: "POST", path: "/2/compliance/jobs", authz: "bearer", body: `{"type":"tweets"}`, status: 429, limited: true},
	// GET /2/compliance/jobs
	{name: "list jobs", method: "GET", path: "/2/compliance/jobs?type=tweets", authz: "bearer", status: 200},
	{name: "list jobs: fields add to the defaults", method: "GET", path: "/2/compliance/jobs?type=tweets&compliance_job.fields=id,status,upload_url", authz: "bearer", status: 200},
	{name: "list jobs by status", method: "GET", path: "/2/compliance/jobs?type=tweets&status=failed", authz: "bearer", status: 200},
	{name: "list jobs: none", method: "GET", path: "/2/compliance/jobs?type=users", authz: "other", status: 200},
	{name: "list jobs: missing type", method: "GET", path: "/2/compliance/jobs", authz: "bearer", status: 400},
	{name: "list jobs: malformed type", method: "GET", path: "/2/compliance/jobs?type=%zz", authz: "bearer", status: 400},
	{name: "list jobs: unknown field", method: "GET", path: "/2/compliance/jobs?type=tweets&compliance_job.fields=secret", authz: "bearer", status: 400},
	{name: "list jobs: bad bearer", method: "GET", path: "/2/compliance/jobs?type=tweets", authz: "Bearer nope", status: 401},
	{name: "list jobs: rate limited", method: "GET", path: "/2/compliance/jobs?type=tweets", authz: "bearer", status: 429, limited: true},
	// GET /2/compliance/jobs/{id}
	{name: "get job", method: "GET", path: "/2/compliance/jobs/{job}", authz: "bearer", status: 200},
	{name: "get job with fields", method: "GET", path: "/2/compliance/jobs/{job}?compliance_job.fields=name", authz: "bearer", status: 200},
	{name: "get complete job", method: "GET", path: "/2/compliance/jobs/{complete}", authz: "bearer", status: 200},
	{name: "get failed job", method: "GET", path: "/2/compliance/jobs/{failed}", authz: "bearer", status: 200},
	{name: "get job: malformed id", method: "GET", path: "/2/compliance/jobs/12ab", authz: "bearer", status: 400},
	{name: "get job: no credentials", method: "GET", path: "/2/compliance/jobs/{job}", status: 401},
	{name: "get job: another app's", method: "GET", path: "/2/compliance/jobs/{job}", authz: "other", status: 404},
	{name: "get job: unknown", method: "GET", path: "/2/compliance/jobs/42", authz: "bearer", status: 404},
	// POST /2/tweets
	{name: "create post", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `{"text":"hello 👋","paid_partnership":true}`, status: 201},
	{name: "create post: blank text", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `{"text":" \u200b "}`, status: 400},
	{name: "create post: lone surrogate", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `{"text":"\ud800"}`, status: 400},
	{name: "create post: unknown field", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `{"text":"x","poll":{}}`, status: 400},
	{name: "create post: bad signature", method: "POST", path: "/2/tweets", authz: `OAuth oauth_consumer_key="x"`, body: `{"text":"x"}`, status: 401},
	{name: "create post: bearer", method: "POST", path: "/2/tweets", authz: "bearer", body: `{"text":"x"}`, status: 403},
	{name: "create post: read-only token", method: "POST", path: "/2/tweets", authz: "oauth:readonly", body: `{"text":"x"}`, status: 403},
	{name: "create post: wrong content type", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `text=x`, status: 415},
	{name: "create post: rate limited", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `{"text":"x"}`, status: 429, limited: true},
	{name: "create post with media", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `{"text":"look","media":{"media_ids":["{media}"]}}`, status: 201},
	{name: "create post: media not processed", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `{"text":"look","media":{"media_ids":["{upload}"]}}`, status: 400},
	// POST /2/media/upload/initialize
	{name: "initialize media upload", method: "POST", path: "/2/media/upload/initialize", authz: "oauth:author", body: `{"media_type":"video/mp4","total_bytes":1048576,"media_category":"tweet_video","additional_owners":["{reader}"],"shared":false}`, status: 200},
	{name: "initialize media upload: inferred category", method: "POST", path: "/2/media/upload/initialize", authz: "oauth:author", body: `{"media_type":"image/gif","total_bytes":10}`, status: 200},
	{name: "initialize media upload: type of another category", method: "POST", path: "/2/media/upload/initialize", authz: "oauth:author", body: `{"media_type":"image/png","media_category":"tweet_video","total_bytes":10}`, status: 400},
	{name: "initialize media upload: bearer", method: "POST", path: "/2/media/upload/initialize", authz: "bearer", body: `{"media_type":"image/png","total_bytes":10}`, status: 403},
	// POST /2/media/upload/{id}/append
	{name: "append media segment", method: "POST", path: "/2/media/upload/{upload}/append", authz: "oauth:author", body: `{"media":"cG5nIQ==","segment_index":0}`, status: 200},
	{name: "append media segment: bad base64", method: "POST", path: "/2/media/upload/{upload}/append", authz: "oauth:author", body: `{"media":"!","segment_index":1}`, status: 400},
	{name: "append media segment: unknown upload", method: "POST", path: "/2/media/upload/42/append", authz: "oauth:author", body: `{"media":"cG5nIQ==","segment_index":0}`, status: 404},
	// POST /2/media/upload/{id}/finalize
	{name: "finalize media upload", method: "POST", path: "/2/media/upload/{finalizable}/finalize", authz: "oauth:author", status: 200},
	{name: "finalize media upload: already finalized", method: "POST", path: "/2/media/upload/{finalizable}/finalize", authz: "oauth:author", status: 409},
	// POST /2/media/upload (one-shot)
	{name: "one-shot media upload", method: "POST", path: "/2/media/upload", authz: "oauth:author", body: `{"media":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==","media_category":"tweet_image","additional_owners":"{reader}"}`, status: 200},
	{name: "one-shot media upload: type of another category", method: "POST", path: "/2/media/upload", authz: "oauth:author", body: `{"media":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==","media_category":"tweet_video"}`, status: 400},
	{name: "one-shot media upload: no category", method: "POST", path: "/2/media/upload", authz: "oauth:author", body: `{"media":"cG5nIQ=="}`, status: 400},
	// GET /2/media/upload?command=STATUS
	{name: "media upload status: pending", method: "GET", path: "/2/media/upload?command=STATUS&media_id={finalizable}", authz: "oauth:author", status: 200},
	{name: "media upload status: succeeded", method: "GET", path: "/2/media/upload?command=STATUS&media_id={media}", authz: "oauth:author", status: 200},
	{name: "media upload status: another user's", method: "GET", path: "/2/media/upload?command=STATUS&media_id={media}", authz: "oauth:reader", status: 404},
	{name: "media upload status: missing media_id", method: "GET", path: "/2/media/upload?command=STATUS", authz: "oauth:author", status: 400},
	// DELETE /2/tweets/{id}
	{name: "delete post: not the author", method: "DELETE", path: "/2/tweets/{kept}", authz: "oauth:reader", status: 403},
	{name: "delete post", method: "DELETE", path: "/2/tweets/{post}", authz: "oauth:author", status: 200},
	{name: "delete post: already deleted", method: "DELETE", path: "/2/tweets/{post}", authz: "oauth:author", status: 404},
	{name: "delete post: malformed id", method: "DELETE", path: "/2/tweets/x", authz: "oauth:author", status: 400},
	{name: "delete post: no credentials", method: "DELETE", path: "/2/tweets/{kept}", status: 401},
	{name: "delete post: rate limited", method: "DELETE", path: "/2/tweets/77", authz: "oauth:author", status: 429, limited: true},
	// GET /2/tweets, GET /2/tweets/{id}
	{name: "lookup posts", method: "GET", path: "/2/tweets?ids={kept},42", authz: "bearer", status: 200},
	{name: "lookup posts with every field and expansion", method: "GET", path: "/2/tweets?ids={kept},{reply}&tweet.fields=" + allTweetFields +
		"&expansions=author_id,referenced_tweets.id,referenced_tweets.id.author_id,in_reply_to_user_id,attachments.media_keys,entities.mentions.username,edit_history_tweet_ids" +
		"&user.fields=" + allUserFields + "&media.fields=media_key,type,width,height,duration_ms,alt_text,public_metrics", authz: "oauth:reader", status: 200},
	{name: "lookup post", method: "GET", path: "/2/tweets/{kept}?tweet.fields=public_metrics,entities,edit_controls", authz: "oauth:reader", status: 200},
	{name: "lookup post: unknown", method: "GET", path: "/2/tweets/42", authz: "bearer", status: 200},
	{name: "lookup posts: malformed id", method: "GET", path: "/2/tweets?ids=x", authz: "bearer", status: 400},
	{name: "lookup posts: unknown field", method: "GET", path: "/2/tweets?ids=1&tweet.fields=nope", authz: "bearer", status: 400},
	{name: "lookup posts: no credentials", method: "GET", path: "/2/tweets?ids=1", status: 401},
	// post.fields (the description's name) and the links expansions bring into data and includes.tweets.
	{name: "lookup posts with post.fields", method: "GET", path: "/2/tweets?ids={kept},{reply}&post.fields=" + allTweetFields, authz: "bearer", status: 200},
	{name: "lookup post with both fields names", method: "GET", path: "/2/tweets/{reply}?post.fields=created_at,lang&tweet.fields=author_id,lang", authz: "bearer", status: 200},
	{name: "lookup post: expansion links only", method: "GET", path: "/2/tweets/{reply}?expansions=" + allTweetExpansions, authz: "bearer", status: 200},
	{name: "lookup posts: expansion links, description spellings", method: "GET", path: "/2/tweets?ids={reply}&expansions=referenced_posts,edit_history_post_ids,author_id&post.fields=id", authz: "oauth:reader", status: 200},
	{name: "lookup post: unknown post.fields value", method: "GET", path: "/2/tweets/{kept}?post.fields=secret", authz: "bearer", status: 400},
	// GET /2/tweets/search/stream (the second app holds a stream: {stream}), /2/connections
	{name: "stream: too many connections", method: "GET", path: "/2/tweets/search/stream", authz: "other", status: 429},
	{name: "stream: backfill_minutes out of range", method: "GET", path: "/2/tweets/search/stream?backfill_minutes=9", authz: "other", status: 400},
	{name: "stream: user context", method: "GET", path: "/2/tweets/search/stream", authz: "oauth:reader", status: 403},
	{name: "list connections", method: "GET", path: "/2/connections", authz: "other", status: 200},
	{name: "list connections: every status and field", method: "GET", path: "/2/connections?status=all&endpoints=filtered_stream&max_results=1&connection.fields=id,client_ip,connected_at,disconnected_at,disconnect_reason,endpoint_name", authz: "other", status: 200},
	{name: "list connections: none", method: "GET", path: "/2/connections?status=inactive", authz: "bearer", status: 200},
	{name: "list connections: unknown status", method: "GET", path: "/2/connections?status=open", authz: "bearer", status: 400},
	{name: "kill connections by uuid", method: "DELETE", path: "/2/connections", authz: "other", body: `{"uuids":["{stream}","00000000-0000-0000-0000-000000000000"]}`, status: 200},
	{name: "kill connections by uuid: none given", method: "DELETE", path: "/2/connections", authz: "other", body: `{"uuids":[]}`, status: 400},
	{name: "kill all connections", method: "DELETE", path: "/2/connections/all", authz: "bearer", status: 200},
	{name: "kill connections of an endpoint", method: "DELETE", path: "/2/connections/filtered_stream", authz: "bearer", status: 200},
	{name: "kill connections: unknown endpoint", method: "DELETE", path: "/2/connections/nope", authz: "bearer", status: 400},
	{name: "kill all connections: user context", method: "DELETE", path: "/2/connections/all", authz: "oauth:reader", status: 403},
	// POST /2/tweets: replies
	{name: "create reply", method: "POST", path: "/2/tweets", authz: "oauth:author", body: `{"text":"more","reply":{"in_reply_to_tweet_id":"{kept}"}}`, status: 201},
	{name: "create reply: not summoned", method: "POST", path: "/2/tweets", authz: "oauth:reader", body: `{"text":"hi","reply":{"in_reply_to_tweet_id":"{kept}"}}`, status: 403},
	// Users
	{name: "users me", method: "GET", path: "/2/users/me?user.fields=" + allUserFields + "&expansions=pinned_tweet_id&tweet.fields=created_at", authz: "oauth:author", status: 200},
	{name: "user by id", method: "GET", path: "/2/users/{author}?expansions=pinned_tweet_id", authz: "bearer", status: 200},
	{name: "user by id: pinned post with post.fields", method: "GET", path: "/2/users/{author}?expansions=pinned_post_id&post.fields=created_at,attachments", authz: "bearer", status: 200},
	{name: "users by usernames: post.fields", method: "GET", path: "/2/users/by?usernames=author&expansions=pinned_tweet_id&post.fields=author_id", authz: "bearer", status: 200},
	{name: "user by id: unknown", method: "GET", path: "/2/users/42", authz: "bearer", status: 200},
	{name: "users by ids", method: "GET", path: "/2/users?ids={author},42&user.fields=public_metrics", authz: "bearer", status: 200},
	{name: "user by username", method: "GET", path: "/2/users/by/username/author", authz: "bearer", status: 200},
	{name: "users by usernames", method: "GET", path: "/2/users/by?usernames=author,reader", authz: "bearer", status: 200},
	{name: "user by id: malformed", method: "GET", path: "/2/users/x", authz: "bearer", status: 400},
	// Likes and reposts
	{name: "like", method: "POST", path: "/2/users/{reader}/likes", authz: "oauth:reader", body: `{"tweet_id":"{kept}"}`, status: 200},
	{name: "like: unknown post", method: "POST", path: "/2/users/{reader}/likes", authz: "oauth:reader", body: `{"tweet_id":"42"}`, status: 400},
	{name: "like: another user", method: "POST", path: "/2/users/{author}/likes", authz: "oauth:reader", body: `{"tweet_id":"{kept}"}`, status: 403},
	{name: "unlike", method: "DELETE", path: "/2/users/{reader}/likes/{kept}", authz: "oauth:reader", status: 200},
	{name: "repost", method: "POST", path: "/2/users/{reader}/retweets", authz: "oauth:reader", body: `{"tweet_id":"{kept}"}`, status: 200},
	{name: "undo repost", method: "DELETE", path: "/2/users/{reader}/retweets/{kept}", authz: "oauth:reader", status: 200},
	// Search and counts
	{name: "search recent", method: "GET", path: "/2/tweets/search/recent?query=fixture&max_results=10&tweet.fields=author_id,created_at,public_metrics&expansions=author_id", authz: "bearer", status: 200},
	{name: "search recent with post.fields and expansion links", method: "GET", path: "/2/tweets/search/recent?query=fixture&post.fields=created_at&expansions=" + allTweetExpansions, authz: "bearer", status: 200},
	{name: "search all with post.fields", method: "GET", path: "/2/tweets/search/all?query=fixture&post.fields=author_id,public_metrics&expansions=author_id", authz: "bearer", status: 200},
	{name: "search recent: unknown post.fields value", method: "GET", path: "/2/tweets/search/recent?query=fixture&post.fields=secret", authz: "bearer", status: 400},
	{name: "search recent: paged", method: "GET", path: "/2/tweets/search/recent?query=fixture%20OR%20more&max_results=10&sort_order=relevancy", authz: "oauth:reader", status: 200},
	{name: "search recent: none", method: "GET", path: "/2/tweets/search/recent?query=nomatch", authz: "bearer", status: 200},
	{name: "search recent: bad query", method: "GET", path: "/2/tweets/search/recent?query=(a", authz: "bearer", status: 400},
	{name: "search recent: max_results", method: "GET", path: "/2/tweets/search/recent?query=a&max_results=5", authz: "bearer", status: 400},
	{name: "search all", method: "GET", path: "/2/tweets/search/all?query=from:author", authz: "bearer", status: 200},
	{name: "search all: user context", method: "GET", path: "/2/tweets/search/all?query=a", authz: "oauth:reader", status: 403},
	{name: "counts recent", method: "GET", path: "/2/tweets/counts/recent?query=fixture&granularity=day", authz: "bearer", status: 200},
	{name: "counts all", method: "GET", path: "/2/tweets/counts/all?query=fixture", authz: "bearer", status: 200},
	{name: "counts recent: bad granularity", method: "GET", path: "/2/tweets/counts/recent?query=a&granularity=week", authz: "bearer", status: 400},
	// GET /2/news/search, GET /2/news/{id}.
	{name: "search news", method: "GET", path: "/2/news/search?query=fixture", authz: "bearer", status: 200},
	{name: "search news with every field", method: "GET", path: "/2/news/search?query=fixture&max_results=100&max_age_hours=720&news.fields=" + allNewsFields, authz: "oauth:reader", status: 200},
	{name: "search news: none", method: "GET", path: "/2/news/search?query=nomatch", authz: "bearer", status: 200},
	{name: "search news: missing query", method: "GET", path: "/2/news/search", authz: "bearer", status: 400},
	{name: "search news: max_results", method: "GET", path: "/2/news/search?query=a&max_results=101&max_age_hours=0", authz: "bearer", status: 400},
	{name: "search news: unknown field", method: "GET", path: "/2/news/search?query=a&news.fields=secret", authz: "bearer", status: 400},
	{name: "search news: no credentials", method: "GET", path: "/2/news/search?query=a", status: 401},
	{name: "search news: rate limited", method: "GET", path: "/2/news/search?query=a", authz: "bearer", status: 429, limited: true},
	{name: "get news", method: "GET", path: "/2/news/{news}", authz: "bearer", status: 200},
	{name: "get news with every field", method: "GET", path: "/2/news/{news}?news.fields=" + allNewsFields, authz: "oauth:reader", status: 200},
	{name: "get news: unknown", method: "GET", path: "/2/news/42", authz: "bearer", status: 200},
	{name: "get news: malformed id", method: "GET", path: "/2/news/x", authz: "bearer", status: 400},
	{name: "get news: unknown field", method: "GET", path: "/2/news/{news}?news.fields=keyword", authz: "bearer", status: 400},
	// POST and GET /2/tweets/search/stream/rules ({rule}: a rule of the first app, value "fixture").
	{name: "add stream rules", method: "POST", path: "/2/tweets/search/stream/rules", authz: "bearer", body: `{"add":[{"value":"cat has:media","tag":"cats"},{"value":"#meme"}]}`, status: 201},
	{name: "add stream rules: duplicate", method: "POST", path: "/2/tweets/search/stream/rules", authz: "bearer", body: `{"add":[{"value":"fixture"},{"value":"dog"}]}`, status: 201},
	{name: "add stream rules: only a duplicate", method: "POST", path: "/2/tweets/search/stream/rules", authz: "bearer", body: `{"add":[{"value":"fixture"}]}`, status: 200},
	{name: "add stream rules: invalid and noncompliant", method: "POST", path: "/2/tweets/search/stream/rules", authz: "bearer", body: `{"add":[{"value":"(cat"},{"value":"has:media"},{"value":"bird"}]}`, status: 200},
	{name: "add stream rules: dry run", method: "POST", path: "/2/tweets/search/stream/rules?dry_run=true", authz: "bearer", body: `{"add":[{"value":"owl"}]}`, status: 201},
	{name: "delete stream rules by ids and values", method: "POST", path: "/2/tweets/search/stream/rules", authz: "bearer", body: `{"delete":{"ids":["42"],"values":["dog"]}}`, status: 200},
	{name: "delete all stream rules: dry run", method: "POST", path: "/2/tweets/search/stream/rules?delete_all=true&dry_run=true", authz: "bearer", status: 200},
	{name: "update stream rules: add and delete", method: "POST", path: "/2/tweets/search/stream/rules", authz: "bearer", body: `{"add":[{"value":"a"}],"delete":{"ids":["1"]}}`, status: 400},
	{name: "update stream rules: user context", method: "POST", path: "/2/tweets/search/stream/rules", authz: "oauth:reader", body: `{"add":[{"value":"a"}]}`, status: 403},
	{name: "list stream rules", method: "GET", path: "/2/tweets/search/stream/rules", authz: "bearer", status: 200},
	{name: "list stream rules: paged", method: "GET", path: "/2/tweets/search/stream/rules?max_results=1", authz: "bearer", status: 200},
	{name: "list stream rules by ids", method: "GET", path: "/2/tweets/search/stream/rules?ids={rule},42", authz: "bearer", status: 200},
	{name: "list stream rules: none", method: "GET", path: "/2/tweets/search/stream/rules", authz: "other", status: 200},
	{name: "list stream rules: max_results", method: "GET", path: "/2/tweets/search/stream/rules?max_results=0", authz: "bearer", status: 400},
	{name: "list stream rules: no credentials", method: "GET", path: "/2/tweets/search/stream/rules", status: 401},
	// /2/webhooks ({webhook}: a webhook of the first app, whose URL leads to
	// loopback; TestWebhookResponsesMatchOpenAPI covers the passing CRCs).
	{name: "list webhooks", method: "GET", path: "/2/webhooks", authz: "bearer", status: 200},
	{name: "list webhooks with fields", method: "GET", path: "/2/webhooks?webhook_config.fields=created_at,url", authz: "bearer", status: 200},
	{name: "list webhooks: none", method: "GET", path: "/2/webhooks", authz: "other", status: 200},
	{name: "list webhooks: unknown field", method: "GET", path: "/2/webhooks?webhook_config.fields=secret", authz: "bearer", status: 400},
	{name: "list webhooks: user context", method: "GET", path: "/2/webhooks", authz: "oauth:reader", status: 403},
	{name: "create webhook: not https", method: "POST", path: "/2/webhooks", authz: "other", body: `{"url":"http://example.com/hook"}`, status: 400},
	{name: "create webhook: CRC fails", method: "POST", path: "/2/webhooks", authz: "other", body: `{"url":"https://127.0.0.1/hook"}`, status: 400},
	{name: "create webhook: limit", method: "POST", path: "/2/webhooks", authz: "bearer", body: `{"url":"https://example.com/hook"}`, status: 400},
	{name: "create webhook: duplicate", method: "POST", path: "/2/webhooks", authz: "bearer", body: `{"url":"https://127.0.0.1/fixture"}`, status: 400},
	{name: "create webhook: no url", method: "POST", path: "/2/webhooks", authz: "bearer", body: `{}`, status: 400},
	{name: "create webhook: no credentials", method: "POST", path: "/2/webhooks", body: `{"url":"https://example.com/hook"}`, status: 401},
	{name: "validate webhook: CRC fails", method: "PUT", path: "/2/webhooks/{webhook}", authz: "bearer", status: 400},
	{name: "validate webhook: another app's", method: "PUT", path: "/2/webhooks/{webhook}", authz: "other", status: 400},
	{name: "validate webhook: malformed id", method: "PUT", path: "/2/webhooks/12ab", authz: "bearer", status: 400},
	{name: "delete webhook: another app's", method: "DELETE", path: "/2/webhooks/{webhook}", authz: "other", status: 400},
	{name: "delete webhook", method: "DELETE", path: "/2/webhooks/{webhook}", authz: "bearer", status: 200},
	{name: "delete webhook: deleted", method: "DELETE", path: "/2/webhooks/{webhook}", authz: "bearer", status: 400},
}

// allTweetFields and allUserFields name every field the endpoints render.
const (
	allTweetFields = "attachments,author_id,conversation_id,created_at,display_text_range,edit_controls,edit_history_tweet_ids,entities,geo," +
		"in_reply_to_user_id,lang,paid_partnership,possibly_sensitive,public_metrics,referenced_tweets,reply_settings,source"
	allUserFields      = "created_at,description,location,pinned_tweet_id,profile_image_url,protected,public_metrics,url,verified,verified_type"
	allTweetExpansions = "author_id,referenced_tweets.id,referenced_tweets.id.author_id,in_reply_to_user_id,attachments.media_keys," +
		"attachments.poll_ids,geo.place_id,entities.mentions.username,edit_history_tweet_ids"
	allNewsFields = "category,cluster_posts_results,contexts,disclaimer,hook,id,keywords,name,summary,updated_at,last_updated_at_ms"
)

// TestResponsesMatchOpenAPI sends every openapiCases request to the real
// server and validates the response (status, content type, body) against
// the operation the platform's OpenAPI description routes it to.
func TestResponsesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	router := apitest.OpenAPIRouter(t)
	b := apitest.Setup(t, 100)
	limited := apitest.Setup(t, 1.0/200) // one request per window on every route
	placeholders := openapiFixtures(t, b)
	for _, tc := range openapiCases {
		t.Run(tc.name, func(t *testing.T) {
			bb := b
			if tc.limited {
				bb = limited
			}
			path, reqBody := tc.path, tc.body
			for k, v := range placeholders {
				path = strings.ReplaceAll(path, k, v)
				reqBody = strings.ReplaceAll(reqBody, k, v)
			}
			authz := map[string]string{"bearer": bb.Bearer, "other": bb.OtherBearer}[tc.authz]
			if authz == "" {
				authz = tc.authz
			}
			ctype := ""
			if reqBody != "" {
				ctype = "application/json"
				if tc.status == 415 {
					ctype = "text/plain"
				}
			}
			var body []byte
			if reqBody != "" {
				body = []byte(reqBody)
			}
			if tc.limited {
				bb.Call(t, tc.method, path, authz, ctype, body)
			}
			r := bb.Call(t, tc.method, path, authz, ctype, body)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d: %.500s", r.Status, tc.status, r.Raw)
			}
			if err := apitest.ValidateResponse(t.Context(), router, tc.method, path, r); err != nil {
				t.Errorf("%s %s -> %d does not match the OpenAPI description: %v\nbody: %.1000s", tc.method, path, r.Status, err, r.Raw)
			}
		})
	}
}

// openapiFixtures creates the records the cases' placeholders name.
func openapiFixtures(t *testing.T, b *apitest.Bundle) map[string]string {
	t.Helper()
	b.AddUser(t, "readonly", storage.AccessRead)
	id := func(v int64) string { return fmt.Sprint(v) }
	created := factory.ComplianceJob(t, b.DB, &factory.ComplianceJobOpts{App: b.App, Name: "fixture", Status: storage.JobCreated})
	complete := factory.ComplianceJob(t, b.DB, &factory.ComplianceJobOpts{App: b.App, Type: storage.ComplianceTypeUsers, Status: storage.JobComplete})
	failed := factory.ComplianceJob(t, b.DB, &factory.ComplianceJobOpts{App: b.App, Status: storage.JobFailed, FailureReason: "The upload was not a list of ids."})
	// A users job in progress makes the conflict case answer 409.
	factory.ComplianceJob(t, b.DB, &factory.ComplianceJobOpts{App: b.App, Type: storage.ComplianceTypeUsers, Status: storage.JobInProgress})
	post := func() string {
		r := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json", []byte(`{"text":"fixture"}`))
		if r.Status != 201 {
			t.Fatalf("create fixture post: %d %s", r.Status, r.Raw)
		}
		return r.Body["data"].(map[string]any)["id"].(string)
	}
	upload := factory.Media(t, b.DB, &factory.MediaOpts{Owner: &b.Author, Category: storage.MediaTweetVideo, TotalBytes: 1 << 20})
	finalizable := factory.Media(t, b.DB, &factory.MediaOpts{Owner: &b.Author, TotalBytes: 4})
	seg := storage.MediaSegment{MediaID: finalizable.ID, Key: storage.MediaSegmentKey(finalizable.ID, "fixture"), Size: 4}
	if _, err := b.DB.AddMediaSegment(t.Context(), seg, time.Now()); err != nil {
		t.Fatalf("add segment: %v", err)
	}
	photo := apitest.SucceededMedia(t, b.DB, b.Author, factory.MediaOpts{MediaType: "image/png"},
		storage.MediaResult{Width: 64, Height: 48, OutputType: "image/png"})
	kept := post()
	reply := b.Call(t, "POST", "/2/tweets", "oauth:author", "application/json",
		[]byte(`{"text":"fixture @reader #tag https://example.com $CASH","media":{"media_ids":["`+id(photo.ID)+`"]},"reply":{"in_reply_to_tweet_id":"`+kept+`"},"geo":{"place_id":"01a9a39529b27f36"}}`))
	if reply.Status != 201 {
		t.Fatalf("create fixture reply: %d %s", reply.Status, reply.Raw)
	}
	story := apitest.AddStory(t, b.DB, storage.NewsStory{LeadTerm: "fixture", Keywords: []string{"fixture", "#tag"}, Name: "Fixture news",
		Summary: "2 posts mention fixture.", Hook: "Fixture is spiking.", Contexts: storage.NewsContexts{Topics: []string{"tag"}},
		PostIDs: []int64{apitest.PostIDOf(t, kept), apitest.PostIDOf(t, reply.Body["data"].(map[string]any)["id"].(string))}, Posts: 2}, time.Now())
	rule := b.Call(t, "POST", "/2/tweets/search/stream/rules", b.Bearer, "application/json", []byte(`{"add":[{"value":"fixture"}]}`))
	if rule.Status != 201 {
		t.Fatalf("add fixture rule: %d %s", rule.Status, rule.Raw)
	}
	stream := openStream(t, b, b.OtherBearer)
	hook, err := b.DB.CreateWebhook(t.Context(), storage.WebhookCreate{AppID: b.App.ID, URL: "https://127.0.0.1/fixture", CheckedAt: time.Now()})
	if err != nil {
		t.Fatalf("create fixture webhook: %v", err)
	}
	return map[string]string{"{webhook}": id(hook.ID), "{stream}": stream, "{rule}": apitest.Obj(rule.Body, "data").([]any)[0].(map[string]any)["id"].(string), "{news}": id(story.ID), "{job}": id(created.ID), "{complete}": id(complete.ID), "{failed}": id(failed.ID), "{post}": post(), "{kept}": kept,
		"{reply}": reply.Body["data"].(map[string]any)["id"].(string), "{author}": id(b.Author.ID), "{reader}": id(b.User.ID),
		"{upload}": id(upload.ID), "{finalizable}": id(finalizable.ID), "{media}": id(photo.ID)}
}

// openStream holds a stream of the app of bearer open until the test ends
// and returns its connection id.
func openStream(t *testing.T, b *apitest.Bundle, bearer string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", b.Srv.URL+"/2/tweets/search/stream", nil)
	req.Header.Set("Authorization", bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("open stream: %v %v", resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	r := b.Get(t, "/2/connections", bearer)
	id, _ := apitest.Obj(r.Body, "data", "0", "id").(string)
	if id == "" {
		t.Fatalf("connections: %s", r.Raw)
	}
	return id
}
