package outbound

import (
	"net/http"
	"strings"
	"testing"
)

// TestHeaderCap: an answer's header is capped like its body: a server
// sending megabytes of header lines is refused, not read into memory
// (the transport's own limit is 10 MB per answer).
func TestHeaderCap(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("x", 8<<10)
	srv, allow := allowServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 128 { // 1 MB of header
			w.Header().Add("X-Filler", filler+string(rune('a'+i%26)))
		}
		w.WriteHeader(http.StatusOK)
	}))
	c := New(Config{Allow: allow, NoRedirects: true})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a 1 MB header was read (status %d); want the answer refused", resp.StatusCode)
	}
}
