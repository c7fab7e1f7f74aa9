package e2e

import (
	"net/url"
	"strings"
	"testing"
)

// oauth2LinkScript asks twitter-api-v2 for an OAuth 2.0 authorization link
// (generateOAuth2AuthLink: PKCE S256, state) and prints it.
const oauth2LinkScript = `'use strict';
const { TwitterApi } = require('twitter-api-v2');
const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
const client = new TwitterApi({ clientId: cfg.clientId, clientSecret: cfg.clientSecret });
const link = client.generateOAuth2AuthLink(cfg.callback, { scope: ['tweet.read', 'users.read', 'tweet.write', 'offline.access'] });
process.stdout.write(JSON.stringify(link) + '\n');
`

// oauth2LoginScript finishes the flow as an application does: the code
// for tokens (loginWithOAuth2), the user (v2.me), a refresh
// (refreshOAuth2Token) and the user again with the refreshed token. The
// plugin points the library's fixed https://api.x.com/2/ prefix at Aviary.
const oauth2LoginScript = `'use strict';
const { TwitterApi, ApiResponseError } = require('twitter-api-v2');
` + aviaryInputAndPluginJS + `
async function main() {
  const settings = { plugins: [aviary] };
  const app = new TwitterApi({ clientId: cfg.clientId, clientSecret: cfg.clientSecret }, settings);
  const out = {};
  const login = await app.loginWithOAuth2({ code: cfg.code, codeVerifier: cfg.codeVerifier, redirectUri: cfg.callback });
  out.login = { accessToken: login.accessToken, refreshToken: login.refreshToken, expiresIn: login.expiresIn, scope: login.scope };
  out.me = (await new TwitterApi(login.accessToken, settings).v2.me()).data;
  const refreshed = await app.refreshOAuth2Token(login.refreshToken);
  out.refreshed = { accessToken: refreshed.accessToken, refreshToken: refreshed.refreshToken, scope: refreshed.scope };
  out.meAgain = (await new TwitterApi(refreshed.accessToken, settings).v2.me()).data;
  try {
    await app.refreshOAuth2Token(login.refreshToken);
    out.replay = { error: 'no error' };
  } catch (e) {
    out.replay = e instanceof ApiResponseError ? { code: e.code, data: e.data } : { error: String(e) };
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data }) : e);
  process.exit(1);
});
`

// TestOAuth2TwitterAPIV2 runs the authorization code flow with the npm
// client twitter-api-v2 1.29.1: its generateOAuth2AuthLink opens the
// consent pages (driven over HTTP like a browser), loginWithOAuth2
// exchanges the code, refreshOAuth2Token rotates, and a replayed refresh
// token is refused.
func TestOAuth2TwitterAPIV2(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", tls: tlsFiles})
	modules := twitterAPIV2(t)
	input := func() map[string]any {
		return map[string]any{"base": s.baseURL, "clientId": s.creds.ClientID, "clientSecret": s.creds.ClientSecret, "callback": s.creds.CallbackURL}
	}
	var link struct {
		URL          string `json:"url"`
		CodeVerifier string `json:"codeVerifier"`
		State        string `json:"state"`
	}
	runNodeScript(t, s, modules, oauth2LinkScript, input(), &link, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)
	u, err := url.Parse(link.URL)
	if err != nil || !strings.HasSuffix(u.Path, "/i/oauth2/authorize") || link.CodeVerifier == "" {
		t.Fatalf("link %+v", link)
	}
	if u.Query().Get("code_challenge_method") != "s256" && u.Query().Get("code_challenge_method") != "S256" {
		t.Errorf("link uses %q, want S256", u.Query().Get("code_challenge_method"))
	}
	// The library links to the platform's host; a person opens the same
	// query on Aviary.
	q := s.authorizeInBrowser(t, s.baseURL+"/i/oauth2/authorize?"+u.RawQuery)
	if q.Get("state") != link.State {
		t.Fatalf("state %q, want %q", q.Get("state"), link.State)
	}
	in := input()
	in["code"], in["codeVerifier"] = q.Get("code"), link.CodeVerifier
	var res struct {
		Login struct {
			AccessToken, RefreshToken string
			ExpiresIn                 int
			Scope                     []string
		} `json:"login"`
		Me        struct{ ID, Username string }              `json:"me"`
		Refreshed struct{ AccessToken, RefreshToken string } `json:"refreshed"`
		MeAgain   struct{ ID string }                        `json:"meAgain"`
		Replay    struct {
			Code  int            `json:"code"`
			Data  map[string]any `json:"data"`
			Error string         `json:"error"`
		} `json:"replay"`
	}
	runNodeScript(t, s, modules, oauth2LoginScript, in, &res, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)
	if res.Login.AccessToken == "" || res.Login.RefreshToken == "" || res.Login.ExpiresIn != 7200 || len(res.Login.Scope) != 4 {
		t.Errorf("login %+v", res.Login)
	}
	if res.Me.ID != s.creds.UserID || res.Me.Username != s.creds.Username || res.MeAgain.ID != s.creds.UserID {
		t.Errorf("me %+v, again %+v; want user %s", res.Me, res.MeAgain, s.creds.UserID)
	}
	if res.Refreshed.RefreshToken == "" || res.Refreshed.RefreshToken == res.Login.RefreshToken {
		t.Errorf("refresh did not rotate: %+v", res.Refreshed)
	}
	if res.Replay.Code != 400 || res.Replay.Data["error"] == nil {
		t.Errorf("replayed refresh token: %+v", res.Replay)
	}
}

// oauth1Plugin points every fixed https://api.x.com/ URL of twitter-api-v2
// (the /oauth/ steps and /2/) at Aviary before the request is signed. The
// library reads answers of https://api.x.com/oauth/ as form-encoded by
// their URL, which the rewrite hides: the plugin asks for that parse mode
// itself (a client redirected at the transport level needs nothing).
const oauth1Plugin = `const cfg = JSON.parse(process.env.AVIARY_E2E_INPUT);
const aviary = {
  onBeforeRequestConfig({ params }) {
    const prefix = 'https://api.x.com/';
    if (!params.url.startsWith(prefix)) throw new Error('unexpected URL ' + params.url);
    if (params.url.startsWith(prefix + 'oauth/')) params.forceParseMode = 'url';
    params.url = cfg.base + '/' + params.url.slice(prefix.length);
  },
};
`

// oauth1LinkScript asks twitter-api-v2 for an OAuth 1.0a link
// (generateAuthLink: request_token, then the authenticate URL).
const oauth1LinkScript = `'use strict';
const { TwitterApi, ApiResponseError } = require('twitter-api-v2');
` + oauth1Plugin + `
async function main() {
  const app = new TwitterApi({ appKey: cfg.appKey, appSecret: cfg.appSecret }, { plugins: [aviary] });
  const link = await app.generateAuthLink(cfg.callback, { linkMode: cfg.linkMode });
  process.stdout.write(JSON.stringify(link) + '\n');
}
main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data }) : e);
  process.exit(1);
});
`

// oauth1LoginScript finishes it: login(verifier) for the user's token,
// then v2.me() with it.
const oauth1LoginScript = `'use strict';
const { TwitterApi, ApiResponseError } = require('twitter-api-v2');
` + oauth1Plugin + `
async function main() {
  const settings = { plugins: [aviary] };
  const pending = new TwitterApi({ appKey: cfg.appKey, appSecret: cfg.appSecret, accessToken: cfg.token, accessSecret: cfg.secret }, settings);
  const login = await pending.login(cfg.verifier);
  const out = { accessToken: login.accessToken, accessSecret: login.accessSecret, userId: login.userId, screenName: login.screenName };
  out.me = (await login.client.v2.me()).data;
  process.stdout.write(JSON.stringify(out) + '\n');
}
main().catch((e) => {
  console.error(e instanceof ApiResponseError ? JSON.stringify({ code: e.code, data: e.data }) : e);
  process.exit(1);
});
`

// TestOAuth1TwitterAPIV2 runs the OAuth 1.0a flow with the npm client
// twitter-api-v2 1.29.1 over HTTPS: generateAuthLink (request_token with
// oauth_callback_confirmed), the authenticate pages, login(verifier)
// (access_token) and v2.me() with the token.
func TestOAuth1TwitterAPIV2(t *testing.T) {
	t.Parallel()
	tlsFiles := newTLSFiles(t)
	s := newStack(t, stackOptions{driver: "local", tls: tlsFiles})
	modules := twitterAPIV2(t)
	in := map[string]any{"base": s.baseURL, "appKey": s.creds.ConsumerKey, "appSecret": s.creds.ConsumerSecret,
		"callback": s.creds.CallbackURL, "linkMode": "authenticate"}
	var link struct {
		URL                    string `json:"url"`
		OAuthToken             string `json:"oauth_token"`
		OAuthTokenSecret       string `json:"oauth_token_secret"`
		OAuthCallbackConfirmed string `json:"oauth_callback_confirmed"`
	}
	runNodeScript(t, s, modules, oauth1LinkScript, in, &link, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)
	u, err := url.Parse(link.URL)
	if err != nil || u.Path != "/oauth/authenticate" || u.Query().Get("oauth_token") != link.OAuthToken || link.OAuthCallbackConfirmed != "true" {
		t.Fatalf("link %+v", link)
	}
	// The library links to the platform's host; a person opens the same
	// query on Aviary.
	q := s.callbackQuery(t, s.oauth1Pages(t, s.browser(), s.baseURL+u.Path+"?"+u.RawQuery))
	if q.Get("oauth_token") != link.OAuthToken {
		t.Fatalf("callback query %v", q)
	}
	in["token"], in["secret"], in["verifier"] = link.OAuthToken, link.OAuthTokenSecret, q.Get("oauth_verifier")
	var res struct {
		AccessToken, AccessSecret, UserID, ScreenName string
		Me                                            struct{ ID, Username string }
	}
	runNodeScript(t, s, modules, oauth1LoginScript, in, &res, "NODE_EXTRA_CA_CERTS="+tlsFiles.cert)
	if res.AccessToken == "" || res.AccessSecret == "" || res.UserID != s.creds.UserID || res.ScreenName != s.creds.Username {
		t.Errorf("login %+v", res)
	}
	if res.Me.ID != s.creds.UserID || res.Me.Username != s.creds.Username {
		t.Errorf("me %+v, want user %s", res.Me, s.creds.UserID)
	}
}
