package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// twitterAPIV2StreamScript drives the filtered stream with twitter-api-v2
// as an application does: v2.updateStreamRules to add rules, v2.streamRules
// to list them, v2.searchStream (autoConnect off, then connect with the
// library's autoReconnect) with expansions and tweet.fields, and posts made
// with v2.tweet by a user. The stream is then terminated through
// DELETE /2/connections/all (the library's generic v2.delete): the library
// reconnects by itself and the next post arrives on the new connection. A
// second connection of the app while one is open is refused. The plugin
// points the library's fixed https://api.x.com/2/ prefix at Aviary for
// requests and for streams (onBeforeStreamRequestConfig).
const twitterAPIV2StreamScript = twitterAPIV2Prelude + `
const { ETwitterStreamEvent } = require('twitter-api-v2');
const plugin = Object.assign({}, aviary, { onBeforeStreamRequestConfig: aviary.onBeforeRequestConfig });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, cond, ms) {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting for ' + what);
    await sleep(20);
  }
}

async function main() {
  const user = new TwitterApi(
    { appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.accessToken, accessSecret: cfg.accessSecret },
    { plugins: [plugin] });
  const app = new TwitterApi(cfg.bearer, { plugins: [plugin] });
  const out = { received: [], dataErrors: [], events: [], latencyMs: [] };

  out.added = await app.v2.updateStreamRules({ add: cfg.rules });
  out.listed = await app.v2.streamRules();

  const stream = await app.v2.searchStream({ autoConnect: false, expansions: 'author_id',
    'tweet.fields': 'created_at,author_id,lang', 'user.fields': 'username,name' });
  const arrived = {};
  stream.on(ETwitterStreamEvent.Data, (d) => { out.received.push(d); arrived[d.data.id] = Date.now(); });
  stream.on(ETwitterStreamEvent.DataError, (d) => out.dataErrors.push(d));
  for (const ev of [ETwitterStreamEvent.Connected, ETwitterStreamEvent.Reconnected, ETwitterStreamEvent.ConnectionLost,
    ETwitterStreamEvent.ConnectionError, ETwitterStreamEvent.ReconnectError, ETwitterStreamEvent.ConnectionClosed]) {
    stream.on(ev, () => out.events.push(ev));
  }
  await stream.connect({ autoReconnect: true, autoReconnectRetries: Infinity, nextRetryTimeout: () => 250 });

  try {
    const second = await app.v2.searchStream();
    second.close();
    out.second = 'connected';
  } catch (e) {
    out.second = e instanceof ApiResponseError ? { code: e.code, data: e.data } : String(e);
  }

  const post = async (text) => {
    const sent = Date.now();
    const id = (await user.v2.tweet(text)).data.id;
    await waitFor('post ' + id, () => arrived[id] !== undefined, 15000);
    out.latencyMs.push(arrived[id] - sent);
    return id;
  };
  out.unmatched = (await user.v2.tweet(cfg.unmatched)).data.id;
  out.first = await post(cfg.texts[0]);

  out.killed = await app.v2.delete('connections/all');
  await waitFor('the library to reconnect', () => out.events.includes(ETwitterStreamEvent.Reconnected), 30000);
  out.second_post = await post(cfg.texts[1]);
  stream.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data }) : e);
  process.exit(1);
});
`

type twitterAPIV2StreamResult struct {
	Added struct {
		Data []struct{ ID, Value, Tag string } `json:"data"`
		Meta struct {
			Summary map[string]int `json:"summary"`
		} `json:"meta"`
	} `json:"added"`
	Listed struct {
		Data []struct{ ID, Value, Tag string } `json:"data"`
	} `json:"listed"`
	Received   []streamMsg      `json:"received"`
	DataErrors []map[string]any `json:"dataErrors"`
	Events     []string         `json:"events"`
	LatencyMs  []float64        `json:"latencyMs"`
	Second     any              `json:"second"`
	Unmatched  string           `json:"unmatched"`
	First      string           `json:"first"`
	SecondPost string           `json:"second_post"`
	Killed     map[string]any   `json:"killed"`
}

// TestStreamTwitterAPIV2Client runs the filtered stream end to end with the
// npm client twitter-api-v2 1.29.1, only the base URL changed (over https,
// as the library requires): rules added and listed, a stream with
// expansions receiving a user's matching post with its matching_rules and
// the expanded author, not the post that matches no rule; a second
// connection refused with the platform's TooManyConnections body; the
// stream terminated through DELETE /2/connections/all, after which the
// library's autoReconnect connects again and receives the next post.
func TestStreamTwitterAPIV2Client(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", workers: 1, tls: tlsFiles,
		env: []string{clientTestTimeout, "AVIARY_STREAM_KEEPALIVE=2s"}})
	rules := []ruleSpec{{Value: "kingfisher #birding", Tag: "kingfishers"}, {Value: `"blue heron"`, Tag: "herons"}}
	input := map[string]any{"base": s.baseURL, "bearer": s.creds.BearerToken, "rules": rules,
		"unmatched": "A quiet morning by the river",
		"texts":     []string{"A kingfisher dived twice #birding", "Saw a Blue Heron at dawn"}}
	var res twitterAPIV2StreamResult
	runNodeScript(t, s, twitterAPIV2(t), twitterAPIV2StreamScript, input, &res, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)

	ruleIDs := map[string]string{}
	for _, r := range res.Added.Data {
		ruleIDs[r.Tag] = r.ID
	}
	if len(ruleIDs) != 2 || ruleIDs["kingfishers"] == "" || ruleIDs["herons"] == "" || res.Added.Meta.Summary["created"] != 2 {
		t.Fatalf("updateStreamRules add = %+v", res.Added)
	}
	if len(res.Listed.Data) != 2 {
		t.Errorf("streamRules = %+v, want the two rules", res.Listed)
	}
	checkTooManyConnections(t, res.Second)
	want := map[string]string{res.First: "kingfishers", res.SecondPost: "herons"}
	for _, m := range res.Received {
		id := m.id()
		if id == res.Unmatched {
			t.Errorf("the post matching no rule was streamed: %s", m.Raw)
		}
		tag, ok := want[id]
		if !ok {
			continue
		}
		if len(m.MatchingRules) != 1 || m.MatchingRules[0].ID != ruleIDs[tag] || m.MatchingRules[0].Tag != tag {
			t.Errorf("post %s matching_rules %+v, want [{%s %s}]", id, m.MatchingRules, ruleIDs[tag], tag)
		}
		if m.Data["author_id"] != s.creds.UserID || m.Data["created_at"] == nil || m.Data["lang"] == nil {
			t.Errorf("post %s fields: %v", id, m.Data)
		}
		users, _ := m.Includes["users"].([]any)
		if len(users) != 1 || users[0].(map[string]any)["username"] != s.creds.Username {
			t.Errorf("post %s includes.users %v, want the author %s", id, m.Includes["users"], s.creds.Username)
		}
	}
	if len(res.Received) < 2 {
		t.Errorf("received %d posts, want both matching posts", len(res.Received))
	}
	if data, _ := res.Killed["data"].(map[string]any); data["successful_kills"] != float64(1) {
		t.Errorf("DELETE /2/connections/all = %v, want one connection killed", res.Killed)
	}
	if !strings.Contains(fmt.Sprint(res.Events), "reconnected") {
		t.Errorf("stream events %v: the library never reconnected", res.Events)
	}
	t.Logf("post to receipt through twitter-api-v2: %v ms; stream events %v; error payloads %v", res.LatencyMs, res.Events, res.DataErrors)
}

// checkTooManyConnections checks a refused second connection as the
// library surfaced it: 429 with the platform's ConnectionException body.
func checkTooManyConnections(t *testing.T, second any) {
	t.Helper()
	m, _ := second.(map[string]any)
	data, _ := m["data"].(map[string]any)
	if m["code"] != float64(429) || data["title"] != "ConnectionException" || data["connection_issue"] != "TooManyConnections" ||
		!strings.HasSuffix(fmt.Sprint(data["type"]), "/streaming-connection") {
		t.Errorf("a second connection of the app = %v, want 429 with the TooManyConnections body", second)
	}
}
