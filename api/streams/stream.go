package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// MaxBackfillMinutes is the most backfill_minutes takes.
const MaxBackfillMinutes = 5

// closeTimeout bounds closing a connection record after the stream ended.
const closeTimeout = 5 * time.Second

func (m *Module) streamRoutes() []httpx.Endpoint {
	return []httpx.Endpoint{{
		Pattern: "GET /2/tweets/search/stream",
		Auth:    auth.BearerOnly,
		Limit:   httpx.Limit{Name: "tweets_search_stream", Requests: 50, Scope: httpx.PerApp},
		Query:   append([]string{"backfill_minutes"}, objects.TweetParams...),
		Handle:  m.stream,
	}}
}

// streamPost is one post on the stream, without the rules it matched
// (render adds matching_rules after them).
type streamPost struct {
	Data     objects.Tweet     `json:"data"`
	Includes *objects.Includes `json:"includes,omitempty"`
}

type matchingRule struct {
	ID  string `json:"id"`
	Tag string `json:"tag,omitempty"`
}

// TooManyConnections is the platform's answer to a connection over the
// app's limit (429, streaming-connection).
func TooManyConnections() *apierr.Error {
	return apierr.StreamingConnection("This stream is currently at the maximum allowed connection limit.").
		With("connection_issue", "TooManyConnections")
}

// stream answers GET /2/tweets/search/stream: a connection record under
// the app's limit, the backfill asked for, then each matching post as one
// JSON line, "\r\n" when idle, until the client goes, the hub ends it
// (termination, shutdown) or a write fails.
func (m *Module) stream(w http.ResponseWriter, r *http.Request) error {
	opts, err := objects.ParseTweetOptions(r)
	if err != nil {
		return err
	}
	q := httpx.ReadQuery(r)
	backfill := q.Int("backfill_minutes", 0, MaxBackfillMinutes, 0)
	if err := q.Err(); err != nil {
		return err
	}
	if m.Hub == nil {
		return apierr.OperationalDisconnect("This stream has been disconnected upstream for operational reasons.")
	}
	ctx := r.Context()
	rec, err := m.Store.OpenStreamConnection(ctx, storage.StreamConnection{AppID: httpx.Principal(r).App.ID,
		Endpoint: storage.EndpointFilteredStream, ClientIP: clientIP(r), Replica: m.Hub.Replica}, m.Connections)
	if errors.Is(err, storage.ErrTooManyConnections) {
		return TooManyConnections()
	}
	if err != nil {
		return err
	}
	conn, err := m.Hub.Register(rec)
	if err != nil {
		m.closeRecord(rec.ID, storage.DisconnectOperational)
		return apierr.OperationalDisconnect("This stream has been disconnected upstream for operational reasons.")
	}
	reason := storage.DisconnectClient
	defer func() {
		m.Hub.Unregister(conn)
		m.closeRecord(rec.ID, reason)
	}()
	s := m.newStreamWriter(w)
	if err := s.start(); err != nil {
		return err
	}
	reason, err = m.serve(ctx, s, conn, opts, backfill)
	return err
}

// serve writes the stream until it ends and returns why.
func (m *Module) serve(ctx context.Context, s *streamWriter, conn *Conn, opts objects.Options, backfill int) (string, error) {
	if backfill > 0 {
		if err := m.backfill(ctx, s, conn.AppID, backfill, opts); err != nil {
			return m.failed(ctx, s, err)
		}
	}
	keep := time.NewTicker(m.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-ctx.Done():
			return storage.DisconnectClient, nil
		case <-conn.Ended():
			reason := conn.Reason()
			return reason, s.write(m.disconnectBody(reason))
		case <-conn.Ready():
			for _, d := range conn.Take() {
				if ctx.Err() != nil || conn.Reason() != "" {
					break // the next turn ends the stream
				}
				if err := m.deliver(ctx, s, d, opts); err != nil {
					return m.failed(ctx, s, err)
				}
			}
			keep.Reset(m.KeepAlive)
		case <-keep.C:
			if err := s.write([]byte("\r\n")); err != nil {
				return storage.DisconnectClient, err
			}
		}
	}
}

// failed ends a stream after err: a write that failed (the client went)
// ends it as is; a failure to read what to send (the store) ends it with
// operational-disconnect, so the client reconnects (with backfill) instead
// of missing the post.
func (m *Module) failed(ctx context.Context, s *streamWriter, err error) (string, error) {
	if errors.Is(err, httpx.ErrResponseStarted) {
		return storage.DisconnectClient, err
	}
	if ctx.Err() != nil {
		return storage.DisconnectClient, nil // the client went during a read: nothing to send, nothing to report
	}
	m.Logger.Warn("stream: ending a stream after a failure", "err", err)
	return storage.DisconnectOperational, s.write(m.disconnectBody(storage.DisconnectOperational))
}

// deliver writes the post of d if the public may see it.
func (m *Module) deliver(ctx context.Context, s *streamWriter, d Delivery, opts objects.Options) error {
	line, ok, err := m.render(ctx, d, opts)
	if err != nil || !ok {
		return err
	}
	return s.write(line)
}

// render is the stream line of d's post with the request's fields and the
// rules it matched, or false when the post can not be shown (deleted,
// protected author). The post's data and includes are rendered once per
// replica for every stream asking for the same fields (renderCache).
func (m *Module) render(ctx context.Context, d Delivery, opts objects.Options) ([]byte, bool, error) {
	body, err := m.renders.get(ctx, renderKey{postID: d.PostID, opts: optionsKey(opts)}, func(ctx context.Context) ([]byte, error) {
		return m.renderPost(ctx, d.PostID, opts)
	})
	if err != nil || body == nil {
		return nil, false, err
	}
	rules := make([]matchingRule, len(d.Rules))
	for i, r := range d.Rules {
		rules[i] = matchingRule{ID: ids.Format(r.RuleID), Tag: r.Tag}
	}
	tail, err := json.Marshal(rules)
	if err != nil {
		return nil, false, fmt.Errorf("stream: encode the rules of post %d: %w", d.PostID, err)
	}
	line := make([]byte, 0, len(body)+len(tail)+24)
	line = append(line, body[:len(body)-1]...) // without its closing brace
	line = append(append(append(line, `,"matching_rules":`...), tail...), "}\r\n"...)
	return line, true, nil
}

// renderPost is the JSON object {data, includes} of post id with opts, nil
// when the public may not see it.
func (m *Module) renderPost(ctx context.Context, id int64, opts objects.Options) ([]byte, error) {
	found, err := m.Store.PostsByIDs(ctx, []int64{id})
	if err != nil {
		return nil, fmt.Errorf("stream: load post %d: %w", id, err)
	}
	if len(found) == 0 {
		return nil, nil
	}
	vis, err := m.Hydrator.Visibility(ctx, found, 0)
	if err != nil {
		return nil, fmt.Errorf("stream: post %d: %w", id, err)
	}
	if vis[id] != objects.Visible {
		return nil, nil
	}
	res, err := m.Hydrator.Tweets(ctx, found, opts, 0)
	if err != nil {
		return nil, fmt.Errorf("stream: render post %d: %w", id, err)
	}
	body, err := json.Marshal(streamPost{Data: res.Data[0], Includes: res.Includes})
	if err != nil {
		return nil, fmt.Errorf("stream: encode post %d: %w", id, err)
	}
	return body, nil
}

// disconnectBody is the in-stream error that ends a stream the service
// closes: the platform's operational-disconnect.
func (m *Module) disconnectBody(reason string) []byte {
	detail := "This stream has been disconnected upstream for operational reasons."
	kind := "UpstreamOperationalDisconnect"
	if reason == storage.DisconnectTerminated {
		detail = "This stream was terminated through the connections endpoints."
		kind = "ForceDisconnect"
	}
	body, _ := json.Marshal(map[string]any{"errors": []map[string]any{{
		"title": apierr.SlugOperationalDisconnect, "disconnect_type": kind, "detail": detail,
		"type": m.Errors.TypeURI(apierr.SlugOperationalDisconnect),
	}}})
	return append(body, '\r', '\n')
}

// closeRecord marks the connection record closed, detached from the
// request (which has ended).
func (m *Module) closeRecord(id, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := m.Store.CloseStreamConnection(ctx, id, reason); err != nil {
		m.Logger.Warn("stream: closing the connection record failed (its heartbeat lapses in 30s)", "connection", id, "err", err)
	}
}

// clientIP is the address the request came from.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// streamWriter writes a stream's lines, each flushed at once under its own
// write deadline, so a server-wide WriteTimeout never cuts a stream and a
// client that stops reading is dropped.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (m *Module) newStreamWriter(w http.ResponseWriter) *streamWriter {
	return &streamWriter{w: w, rc: http.NewResponseController(w), timeout: max(2*m.KeepAlive, 30*time.Second)}
}

// start sends the status line and headers; the read deadline of the
// server (AVIARY_HTTP_READ_TIMEOUT) is lifted: a stream has no body to read.
func (s *streamWriter) start() error {
	_ = s.rc.SetReadDeadline(time.Time{})
	h := s.w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	s.w.WriteHeader(http.StatusOK)
	return s.flush()
}

func (s *streamWriter) write(b []byte) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("stream write: %w: %w", httpx.ErrResponseStarted, err)
	}
	return s.flush()
}

func (s *streamWriter) flush() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	if err := s.rc.Flush(); err != nil {
		return fmt.Errorf("stream flush: %w: %w", httpx.ErrResponseStarted, err)
	}
	return nil
}
