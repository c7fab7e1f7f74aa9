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
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
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
		Query:   append([]string{"backfill_minutes"}, render.TweetParams...),
		Handle:  m.stream,
	}}
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
	return m.open(w, r, storage.EndpointFilteredStream, func(ctx context.Context, s *streamWriter, conn *Conn) (string, error) {
		return m.serve(ctx, s, conn, opts, backfill)
	})
}

// open holds a streaming connection to endpoint for the request: a
// connection record under the app's limit for that endpoint
// (TooManyConnections over it), registered with the hub, the status line
// sent; then serve writes the stream until it ends and says why, and the
// record is closed with that reason.
func (m *Module) open(w http.ResponseWriter, r *http.Request, endpoint string,
	serve func(ctx context.Context, s *streamWriter, conn *Conn) (string, error)) error {
	if m.Hub == nil {
		return apierr.OperationalDisconnect("This stream has been disconnected upstream for operational reasons.")
	}
	ctx := r.Context()
	rec, err := m.Store.OpenStreamConnection(ctx, storage.StreamConnection{AppID: httpx.Principal(r).App.ID,
		Endpoint: endpoint, ClientIP: clientIP(r), Replica: m.Hub.Replica}, m.Connections)
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
	if after, ok := httpx.StreamEnd(ctx); ok { // a fault (docs/faults.md)
		end := time.AfterFunc(after, func() { conn.finish(storage.DisconnectOperational) })
		defer end.Stop()
	}
	s := m.newStreamWriter(w)
	if err := s.start(); err != nil {
		return err
	}
	reason, err = serve(ctx, s, conn)
	return err
}

// serve writes the stream until it ends and returns why.
func (m *Module) serve(ctx context.Context, s *streamWriter, conn *Conn, opts render.Options, backfill int) (string, error) {
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
				if conn.seen(d) {
					continue // the backfill wrote it
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

// deliver writes the post of d if the public may see it, or d's activity
// line as it is.
func (m *Module) deliver(ctx context.Context, s *streamWriter, d Delivery, opts render.Options) error {
	if d.Body != nil {
		return s.write(append(append(make([]byte, 0, len(d.Body)+2), d.Body...), '\r', '\n'))
	}
	line, ok, err := m.render(ctx, d, opts)
	if err != nil || !ok {
		return err
	}
	return s.write(line)
}

// render is the stream line of d's post with the request's fields and the
// rules it matched, or false when the post can not be shown (deleted,
// protected author). The post's data and includes are rendered once per
// replica for every stream asking for the same fields (renderCache); the
// line is render.WithMatchingRules of them, as webhook stream links
// deliver it, and "\r\n".
func (m *Module) render(ctx context.Context, d Delivery, opts render.Options) ([]byte, bool, error) {
	body, err := m.renders.get(ctx, renderKey{postID: d.PostID, opts: optionsKey(opts)}, func(ctx context.Context) ([]byte, error) {
		return m.Hydrator.PostMessage(ctx, d.PostID, opts)
	})
	if err != nil || body == nil {
		return nil, false, err
	}
	line, err := render.WithMatchingRules(body, d.Rules)
	if err != nil {
		return nil, false, fmt.Errorf("stream: post %d: %w", d.PostID, err)
	}
	return append(line, '\r', '\n'), true, nil
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
