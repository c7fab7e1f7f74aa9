package e2e

import (
	"testing"
	"time"
)

// twitterAPIV2UsageScript drives twitter-api-v2 against an app with a
// read cap of 2 posts and 3 credits (a post written costs 1): three posts,
// a fourth refused for credits (402), a lookup of the three (admitted: the
// app had read none), a second lookup refused by the cap (429
// usage-capped), and the library's own usage() (GET /2/usage/tweets).
const twitterAPIV2UsageScript = twitterAPIV2Prelude + `
function refusal(e) {
  if (!(e instanceof ApiResponseError)) throw e;
  return { code: e.code, rateLimitError: e.rateLimitError, data: e.data };
}

async function main() {
  const user = new TwitterApi(
    { appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret },
    { plugins: [aviary] });
  const app = new TwitterApi(cfg.bearer, { plugins: [aviary] });
  const out = { posted: [] };
  for (let i = 1; i <= 3; i++) out.posted.push((await user.v2.tweet('paid for, ' + i)).data.id);
  try { await user.v2.tweet('one too many'); } catch (e) { out.depleted = refusal(e); }
  out.lookup = await app.v2.tweets(out.posted);
  try { await app.v2.tweets(out.posted); } catch (e) { out.capped = refusal(e); }
  out.usage = await app.v2.usage({ days: 2, 'usage.fields': ['project_usage', 'project_cap', 'daily_project_usage', 'cap_reset_day'] });
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data }) : e);
  process.exit(1);
});
`

type usageRefusal struct {
	Code           int            `json:"code"`
	RateLimitError bool           `json:"rateLimitError"`
	Data           map[string]any `json:"data"`
}

type twitterAPIV2UsageResult struct {
	Posted   []string       `json:"posted"`
	Depleted *usageRefusal  `json:"depleted"`
	Lookup   map[string]any `json:"lookup"`
	Capped   *usageRefusal  `json:"capped"`
	Usage    struct {
		Data struct {
			ProjectUsage      string `json:"project_usage"`
			ProjectCap        string `json:"project_cap"`
			CapResetDay       int    `json:"cap_reset_day"`
			DailyProjectUsage struct {
				Usage []struct{ Date, Usage string } `json:"usage"`
			} `json:"daily_project_usage"`
		} `json:"data"`
	} `json:"usage"`
}

// adminUsageReport is what aviary admin app usage|credits print.
type adminUsageReport struct {
	ReadCap        *int64 `json:"read_cap"`
	CreditsAdded   int64  `json:"credits_added"`
	CreditsSpent   int64  `json:"credits_spent"`
	CreditsBalance int64  `json:"credits_balance"`
}

// TestUsageTwitterAPIV2Client sets the demo app's read cap and credits
// with aviary admin, then drives the API with the npm client
// twitter-api-v2: the post past the credits is the platform's 402
// CreditsDepleted and the read past the cap its 429 usage-capped, each an
// ApiResponseError with the platform's body; the library's usage() reads
// GET /2/usage/tweets; the admin command then shows the credits spent.
func TestUsageTwitterAPIV2Client(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", tls: tlsFiles,
		env: []string{clientTestTimeout, "AVIARY_USAGE_PRICES=post_write=1", "AVIARY_USAGE_FLUSH_INTERVAL=100ms"}})
	var rep adminUsageReport
	s.runJSON(&rep, "admin", "app", "usage", "--app", "aviary-demo", "--read-cap", "2")
	if rep.ReadCap == nil || *rep.ReadCap != 2 {
		t.Fatalf("admin app usage: %+v", rep)
	}
	s.runJSON(&rep, "admin", "app", "credits", "--app", "aviary-demo", "--add", "3")
	if rep.CreditsAdded != 3 || rep.CreditsBalance != 3 {
		t.Fatalf("admin app credits: %+v", rep)
	}
	input := map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken, "appKey": s.creds.ConsumerKey,
		"appSecret": s.creds.ConsumerSecret, "accessToken": s.creds.AccessToken, "accessSecret": s.creds.AccessTokenSecret}
	var res twitterAPIV2UsageResult
	runNodeScript(t, s, twitterAPIV2(t), twitterAPIV2UsageScript, input, &res, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)

	if len(res.Posted) != 3 {
		t.Fatalf("posted %v", res.Posted)
	}
	d := res.Depleted
	if d == nil || d.Code != 402 || d.Data["title"] != "CreditsDepleted" || d.Data["type"] != "https://api.x.com/2/problems/credits" ||
		d.Data["detail"] == nil || d.Data["status"] != nil {
		t.Errorf("fourth post: %+v, want the library's ApiResponseError with the platform's 402 CreditsDepleted", d)
	}
	if data, _ := res.Lookup["data"].([]any); len(data) != 3 {
		t.Errorf("first lookup %v, want the three posts", res.Lookup)
	}
	c := res.Capped
	if c == nil || c.Code != 429 || !c.RateLimitError || c.Data["title"] != "UsageCapExceeded" ||
		c.Data["type"] != "https://api.x.com/2/problems/usage-capped" || c.Data["period"] != "Monthly" || c.Data["scope"] != "Product" ||
		c.Data["detail"] != "Usage cap exceeded: Monthly product cap" {
		t.Errorf("second lookup: %+v, want the library's ApiResponseError with the platform's usage-capped problem", c)
	}
	u := res.Usage.Data
	today := time.Now().UTC().Format(time.DateOnly) + "T00:00:00.000Z"
	days := u.DailyProjectUsage.Usage
	if u.ProjectUsage != "3" || u.ProjectCap != "2" || u.CapResetDay != 1 || len(days) != 2 || days[1].Date != today || days[1].Usage != "3" {
		t.Errorf("usage() = %+v, want 3 posts read today against a cap of 2", u)
	}
	for range 100 { // the API records what it counted every 100 ms
		s.runJSON(&rep, "admin", "app", "credits", "--app", "aviary-demo")
		if rep.CreditsSpent == 3 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rep.CreditsSpent != 3 || rep.CreditsBalance != 0 {
		t.Errorf("admin app credits after the run: %+v, want 3 spent, balance 0 (the refused post cost nothing)", rep)
	}
}
