package auth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The platform's "Creating a signature" worked example.
const (
	xConsumerKey    = "xvz1evFS4wEEPTGEFPHBog"
	xConsumerSecret = "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw"
	xToken          = "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"
	xTokenSecret    = "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE"
	xNonce          = "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"
	xTimestamp      = 1318622958
	xStatusBody     = "status=Hello%20Ladies%20%2b%20Gentlemen%2c%20a%20signed%20OAuth%20request%21"
	xBase           = "POST&https%3A%2F%2Fapi.x.com%2F1.1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521"
	xSignature      = "Ls93hJiZbQ3akF3HF3x1Bz8/zU4="
)

// RFC 5849 §1.2 example (photos.example.net).
const (
	rfcBase      = "GET&http%3A%2F%2Fphotos.example.net%2Fphotos&file%3Dvacation.jpg%26oauth_consumer_key%3Ddpf43f3p2l4k3l03%26oauth_nonce%3DchapoH%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131202%26oauth_token%3Dnnch734d00sl2jdk%26size%3Doriginal"
	rfcSignature = "MdpQcU8iPSUjWoN/UDMsK2sui9I="
)

func TestSignatureVectors(t *testing.T) {
	tests := []struct {
		name                      string
		method, baseURL           string
		params                    url.Values
		consumerSecret, tokenSecr string
		wantBase, wantSig         string
	}{
		{
			name: "platform creating-a-signature example", method: "post",
			baseURL: "https://api.x.com/1.1/statuses/update.json",
			params: url.Values{
				"status":                 {"Hello Ladies + Gentlemen, a signed OAuth request!"},
				"include_entities":       {"true"},
				"oauth_consumer_key":     {xConsumerKey},
				"oauth_nonce":            {xNonce},
				"oauth_signature_method": {"HMAC-SHA1"},
				"oauth_timestamp":        {"1318622958"},
				"oauth_token":            {xToken},
				"oauth_version":          {"1.0"},
			},
			consumerSecret: xConsumerSecret, tokenSecr: xTokenSecret,
			wantBase: xBase, wantSig: xSignature,
		},
		{
			name: "RFC 5849 section 1.2 example", method: "GET",
			baseURL: "http://photos.example.net/photos",
			params: url.Values{
				"file": {"vacation.jpg"}, "size": {"original"},
				"oauth_consumer_key": {"dpf43f3p2l4k3l03"}, "oauth_token": {"nnch734d00sl2jdk"},
				"oauth_signature_method": {"HMAC-SHA1"}, "oauth_timestamp": {"137131202"},
				"oauth_nonce": {"chapoH"}, "oauth_signature": {"ignored"},
			},
			consumerSecret: "kd94hf93k423kf44", tokenSecr: "pfkkdhi9sl3r4s00",
			wantBase: rfcBase, wantSig: rfcSignature,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := SignatureBaseString(tt.method, tt.baseURL, tt.params)
			if base != tt.wantBase {
				t.Fatalf("base string\n got %s\nwant %s", base, tt.wantBase)
			}
			if sig := Sign(base, tt.consumerSecret, tt.tokenSecr); sig != tt.wantSig {
				t.Errorf("signature = %s, want %s", sig, tt.wantSig)
			}
		})
	}
}

// TestRFC5849BaseStringFromRequest derives the §3.4.1.1 example base string
// from the example HTTP request: repeated and empty parameters, a body
// without '=', '+' in the body, realm excluded, non-default port handling.
func TestRFC5849BaseStringFromRequest(t *testing.T) {
	const want = "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7"
	r := httptest.NewRequest(http.MethodPost, "/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b", strings.NewReader("c2&a3=2+q"))
	r.Host = "example.com"
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	header, err := parseOAuthParams(`realm="Example", oauth_consumer_key="9djdj82h48djs9d2", oauth_token="kkk9d7dh3k39sjv7", oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="7d8f3e4a", oauth_signature="bYT5CMsGcbgUdFHObYMEfcx6bsw%3D"`)
	if err != nil {
		t.Fatal(err)
	}
	params, err := requestParams(r)
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range signedHeaderParams(header) {
		params[name] = append(params[name], values...)
	}
	if got := SignatureBaseString(r.Method, baseURL(r, nil), params); got != want {
		t.Errorf("base string\n got %s\nwant %s", got, want)
	}
}

// TestSignRequestReproducesPlatformExample signs the platform's example
// request and checks the header carries the documented signature.
func TestSignRequestReproducesPlatformExample(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "https://api.x.com/1.1/statuses/update.json?include_entities=true", strings.NewReader(xStatusBody))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := SignRequest(r, "", xConsumerKey, xConsumerSecret, xToken, xTokenSecret, time.Unix(xTimestamp, 0), xNonce); err != nil {
		t.Fatal(err)
	}
	h := r.Header.Get("Authorization")
	if !strings.HasPrefix(h, "OAuth ") || !strings.Contains(h, `oauth_signature="`+PercentEncode(xSignature)+`"`) {
		t.Errorf("Authorization = %s, want signature %s", h, xSignature)
	}
	body, err := io.ReadAll(r.Body)
	if err != nil || string(body) != xStatusBody {
		t.Errorf("body after signing = %q (%v), want it restored", body, err)
	}
}

func TestPercentEncode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Ladies + Gentlemen", "Ladies%20%2B%20Gentlemen"},
		{"An encoded string!", "An%20encoded%20string%21"},
		{"Dogs, Cats & Mice", "Dogs%2C%20Cats%20%26%20Mice"},
		{"☃", "%E2%98%83"},
		{"AZaz09-._~", "AZaz09-._~"},
		{"/=%*", "%2F%3D%25%2A"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := PercentEncode(tt.in); got != tt.want {
			t.Errorf("PercentEncode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
