package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// twitterAPIV2Prelude starts a node script driving twitter-api-v2: it
// loads the library, reads the input (AVIARY_E2E_INPUT) into cfg and
// defines the plugin aviary, which points the library's fixed
// https://api.x.com/2/ prefix at cfg.base before the request is signed.
const twitterAPIV2Prelude = `'use strict';
const { TwitterApi, ApiResponseError } = require('twitter-api-v2');

const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
const prefix = 'https://api.x.com/2/';
const aviary = {
  onBeforeRequestConfig({ params }) {
    if (!params.url.startsWith(prefix)) throw new Error('unexpected URL ' + params.url);
    params.url = cfg.base + '/2/' + params.url.slice(prefix.length);
  },
};
`

// twitterAPIV2LimitsScript posts with twitter-api-v2 through the address
// given (a loopback spelling other than the server's public URL's) and
// reports the rate limits the library parsed from each POST /2/tweets: its
// generic v2.post with fullResponse (rateLimit with day and userDay), then
// its v2.tweet helper until the user's 24-hour limit refuses a post (the
// library's ApiResponseError, with the same rateLimit). The plugin rewrites
// the URL before the request is signed, so the library signs over the
// address it calls.
const twitterAPIV2LimitsScript = twitterAPIV2Prelude + `
async function main() {
  const client = new TwitterApi(
    { appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret },
    { plugins: [aviary] });
  const out = { posts: [] };
  const first = await client.v2.post('tweets', { text: 'counted for the day, 1' }, { fullResponse: true });
  out.posts.push({ id: first.data.data.id, rateLimit: first.rateLimit });
  for (let i = 2; i <= cfg.tries; i++) {
    try {
      await client.v2.tweet('counted for the day, ' + i);
      out.posts.push({ ok: true });
    } catch (e) {
      if (!(e instanceof ApiResponseError)) throw e;
      out.refused = { code: e.code, rateLimitError: e.rateLimitError, rateLimit: e.rateLimit, data: e.data,
        retryAfter: e.headers['retry-after'] };
      break;
    }
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data }) : e);
  process.exit(1);
});
`

// libraryRateLimit is twitter-api-v2's TwitterRateLimit.
type libraryRateLimit struct {
	Limit     int `json:"limit"`
	Remaining int `json:"remaining"`
	Reset     int64
	Day       *struct {
		Limit, Remaining int
		Reset            int64
	} `json:"day"`
	UserDay *struct {
		Limit, Remaining int
		Reset            int64
	} `json:"userDay"`
}

type twitterAPIV2LimitsResult struct {
	Posts []struct {
		ID        string            `json:"id"`
		OK        bool              `json:"ok"`
		RateLimit *libraryRateLimit `json:"rateLimit"`
	} `json:"posts"`
	Refused *struct {
		Code           int               `json:"code"`
		RateLimitError bool              `json:"rateLimitError"`
		RateLimit      *libraryRateLimit `json:"rateLimit"`
		Data           map[string]any    `json:"data"`
		RetryAfter     string            `json:"retryAfter"`
	} `json:"refused"`
}

// TestTwitterAPIV2DayLimitsOverLoopback runs `aviary dev` (what make run
// serves) with its public URL on localhost, as make run configures it, and
// drives it with the npm client twitter-api-v2 1.29.1 through
// https://127.0.0.1:<port> (the library only speaks https): the library
// signs OAuth 1.0a over 127.0.0.1 and is accepted, and it parses the 24-hour
// limits of POST /2/tweets (set to 3 per user and 50 per app here) into
// rateLimit.userDay and rateLimit.day; the user's fourth post is the
// platform's 429, a rate-limit error to the library with userDay.remaining 0.
func TestTwitterAPIV2DayLimitsOverLoopback(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{dev: true, driver: "local", tls: tlsFiles, publicHost: "localhost",
		env: []string{clientTestTimeout, "AVIARY_RATE_LIMIT_SCALE=1", "AVIARY_POSTS_USER_24H_LIMIT=3", "AVIARY_POSTS_APP_24H_LIMIT=50"}})
	if !strings.HasPrefix(s.baseURL, "https://127.0.0.1:") {
		t.Fatalf("the stack is called at %s, want https://127.0.0.1:<port>", s.baseURL)
	}
	if left := time.Until(time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)); left < 30*time.Second {
		time.Sleep(left + time.Second) // the 24-hour windows would turn over mid-test
	}
	midnight := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Unix()
	var res twitterAPIV2LimitsResult
	runNodeScript(t, s, twitterAPIV2(t), twitterAPIV2LimitsScript, map[string]any{"base": s.baseURL, "tries": 5}, &res,
		"NODE_EXTRA_CA_CERTS="+tlsFiles.cert)

	if len(res.Posts) != 3 || res.Posts[0].ID == "" || !res.Posts[1].OK || !res.Posts[2].OK {
		t.Fatalf("posts %+v, want three accepted (signed over 127.0.0.1, public URL on localhost)", res.Posts)
	}
	rl := res.Posts[0].RateLimit
	if rl == nil || rl.Limit != 200 || rl.Remaining != 199 {
		t.Fatalf("rateLimit of the first post %+v, want limit 200, remaining 199", rl)
	}
	if rl.UserDay == nil || rl.UserDay.Limit != 3 || rl.UserDay.Remaining != 2 || rl.UserDay.Reset != midnight {
		t.Errorf("rateLimit.userDay %+v, want limit 3, remaining 2, reset %d", rl.UserDay, midnight)
	}
	if rl.Day == nil || rl.Day.Limit != 50 || rl.Day.Remaining != 49 || rl.Day.Reset != midnight {
		t.Errorf("rateLimit.day %+v, want limit 50, remaining 49, reset %d", rl.Day, midnight)
	}
	r := res.Refused
	if r == nil || r.Code != 429 || !r.RateLimitError {
		t.Fatalf("fourth post: %+v, want the library's rate-limit error (429)", r)
	}
	if r.RateLimit == nil || r.RateLimit.UserDay == nil || r.RateLimit.UserDay.Remaining != 0 || r.RateLimit.UserDay.Reset != midnight {
		t.Errorf("429 rateLimit %+v, want userDay remaining 0, reset %d", r.RateLimit, midnight)
	}
	if r.Data["title"] != "Too Many Requests" || r.Data["type"] != "about:blank" || r.Data["status"] != float64(429) {
		t.Errorf("429 body %v, want the platform's Too Many Requests problem", r.Data)
	}
	retry, err := strconv.ParseInt(r.RetryAfter, 10, 64)
	if left := midnight - time.Now().Unix(); err != nil || retry < left-60 || retry > left+1 {
		t.Errorf("Retry-After %q, want about %d seconds (until 00:00 UTC)", r.RetryAfter, left)
	}
}
