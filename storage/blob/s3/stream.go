package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/aviary-dev/aviary/storage/blob"
)

// abortTimeout bounds the AbortMultipartUpload that cleans up after a failed
// upload (which may be the caller's cancellation).
const abortTimeout = 30 * time.Second

// upload streams in.Body in parts of partSize(size), read into at most
// uploadConcurrency reusable buffers: each filled buffer is uploaded as a
// part while the next is read, so at most uploadConcurrency parts are in
// flight. A body that fits one part is sent with one PutObject. On any
// failure (body, S3, ctx) the multipart upload is aborted, so no parts are
// left behind.
func (s *Store) upload(ctx context.Context, in *awss3.PutObjectInput, size int64) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	src := &partReader{r: ctxReader{ctx, in.Body}}
	buf := s.partBuffer(size)
	n, last, err := src.next(buf)
	if err != nil {
		s.releaseBuffer(buf)
		return fmt.Errorf("read body: %w", err)
	}
	if !last {
		return s.uploadParts(ctx, cancel, in, src, buf[:n], size)
	}
	if err := checkLength(int64(n), size); err != nil {
		s.releaseBuffer(buf)
		return err
	}
	one := *in
	one.Body, one.ContentLength = bytes.NewReader(buf[:n]), aws.Int64(int64(n))
	if _, err = s.api.PutObject(ctx, &one, unsignedPayload); err != nil {
		// Not reused: after a failed request the HTTP transport may still
		// be reading the body in the background.
		return err
	}
	s.releaseBuffer(buf)
	return nil
}

// partBuffer is a buffer for the first part of a streamed Put of size
// bytes (-1: unknown). Minimum-size buffers come from a pool: most streamed
// puts (media segments, small results) fit one part, and a fresh 5 MiB
// buffer each would churn the heap.
func (s *Store) partBuffer(size int64) []byte {
	n := partSize(size)
	if n == blob.MinPartSize {
		if b, ok := s.buffers.Get().(*[]byte); ok {
			return *b
		}
	}
	return make([]byte, n)
}

// releaseBuffer returns a buffer partBuffer made to the pool, once the put
// that used it is done with it.
func (s *Store) releaseBuffer(b []byte) {
	if cap(b) == blob.MinPartSize {
		b = b[:cap(b)]
		s.buffers.Put(&b)
	}
}

// partSize is the smallest allowed part size that fits size in maxParts
// parts (size -1: the minimum, allowing objects up to ~48 GiB).
func partSize(size int64) int64 {
	return max(blob.MinPartSize, (size+maxParts-1)/maxParts)
}

// checkLength reports a body whose length n differs from the declared size
// (-1: unknown, anything goes).
func checkLength(n, size int64) error {
	if size >= 0 && n != size {
		return fmt.Errorf("read body: length %d differs from declared size %d", n, size)
	}
	return nil
}

// uploadParts uploads first and the rest of src as a multipart upload and
// completes it, or aborts it on failure.
func (s *Store) uploadParts(ctx context.Context, cancel context.CancelCauseFunc, in *awss3.PutObjectInput, src *partReader, first []byte, size int64) error {
	key := aws.ToString(in.Key)
	id, err := s.createUpload(ctx, key, aws.ToString(in.ContentType))
	if err != nil {
		return fmt.Errorf("create multipart upload: %w", err)
	}
	u := &partUploader{
		s: s, ctx: ctx, cancel: cancel, key: key, id: id,
		free: make(chan []byte, uploadConcurrency), buffers: 1, bufSize: cap(first),
	}
	parts, err := u.run(src, first, size)
	if err == nil {
		err = s.completeUpload(ctx, key, id, parts)
	}
	if err != nil {
		return errors.Join(err, s.abortAfterFailure(ctx, key, id))
	}
	return nil
}

// abortAfterFailure aborts upload id, even if ctx is done.
func (s *Store) abortAfterFailure(ctx context.Context, key, id string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	if err := s.abortUpload(ctx, key, id); err != nil {
		return fmt.Errorf("abort multipart upload %s: %w", id, err)
	}
	return nil
}

// partUploader uploads the parts of one multipart upload concurrently. Its
// ctx is cancelled, with the error as cause, when a part fails.
type partUploader struct {
	s       *Store
	ctx     context.Context
	cancel  context.CancelCauseFunc
	key, id string
	free    chan []byte // buffers whose part is done
	buffers int         // buffers allocated so far
	bufSize int         // the part size
	wg      sync.WaitGroup
	mu      sync.Mutex
	parts   []blob.Part
}

// run uploads data and the rest of src as parts 1, 2, ... and returns them
// in part-number order once all are uploaded.
func (u *partUploader) run(src *partReader, data []byte, size int64) ([]blob.Part, error) {
	total := int64(0)
	for number, last := 1, false; ; number++ {
		total += int64(len(data))
		u.send(number, data)
		if last {
			if err := checkLength(total, size); err != nil {
				u.cancel(err)
			}
			break
		}
		var err error
		if data, last, err = u.nextPart(src, number+1); err != nil {
			u.cancel(err)
			break
		}
	}
	u.wg.Wait()
	if u.ctx.Err() != nil {
		return nil, context.Cause(u.ctx)
	}
	slices.SortFunc(u.parts, func(a, b blob.Part) int { return a.Number - b.Number })
	return u.parts, nil
}

// nextPart reads part number from src into a free buffer.
func (u *partUploader) nextPart(src *partReader, number int) (data []byte, last bool, err error) {
	if number > maxParts {
		return nil, false, fmt.Errorf("body needs more than %d parts of %d bytes", maxParts, partSize(-1))
	}
	buf, err := u.buffer()
	if err != nil {
		return nil, false, err
	}
	n, last, err := src.next(buf)
	if err != nil {
		return nil, false, fmt.Errorf("read body: %w", err)
	}
	return buf[:n], last, nil
}

// buffer returns a free part buffer, allocating up to uploadConcurrency of
// them, else waiting for a part to finish.
func (u *partUploader) buffer() ([]byte, error) {
	select {
	case b := <-u.free:
		return b, nil
	default:
	}
	if u.buffers < uploadConcurrency {
		u.buffers++
		return make([]byte, u.bufSize), nil
	}
	select {
	case b := <-u.free:
		return b, nil
	case <-u.ctx.Done():
		return nil, context.Cause(u.ctx)
	}
}

// send uploads data as part number in the background; its buffer is freed
// once done.
func (u *partUploader) send(number int, data []byte) {
	u.wg.Go(func() {
		defer func() { u.free <- data[:cap(data)] }()
		p, err := u.s.putPart(u.ctx, u.key, u.id, number, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			u.cancel(fmt.Errorf("part %d: %w", number, err))
			return
		}
		u.mu.Lock()
		u.parts = append(u.parts, p)
		u.mu.Unlock()
	})
}

// partReader cuts a stream into parts, telling which part is the last (so
// an exact multiple of the part size needs no empty trailing part).
type partReader struct {
	r       io.Reader
	peek    [1]byte
	peeking bool // peek holds the next byte
}

// next fills buf with the next part and reports whether the stream ends
// after it; a short part is always the last.
func (p *partReader) next(buf []byte) (n int, last bool, err error) {
	if p.peeking {
		buf[0], n, p.peeking = p.peek[0], 1, false
	}
	// Not io.ReadFull: it reports a clean end after a partial read as
	// io.ErrUnexpectedEOF, which a source also returns for a body that broke
	// off (net/http's chunked reader does), and that must fail the upload.
	for n < len(buf) {
		m, err := p.r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	if _, err := io.ReadFull(p.r, p.peek[:]); err != nil {
		return n, err == io.EOF, ignoreEOF(err)
	}
	p.peeking = true
	return n, false, nil
}

func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// ctxReader stops reading once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := context.Cause(c.ctx); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
