package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
)

// fetch writes the upload's bytes to path and returns their size: from
// the original when an earlier attempt stored it, else by assembling the
// segments (which stores the original). Segment copies left behind are
// deleted either way.
func (p *Processor) fetch(ctx context.Context, m storage.Media, path string) (int64, error) {
	segs, err := p.Store.MediaSegments(ctx, m.ID)
	if err != nil {
		return 0, err
	}
	key := storage.MediaOriginalKey(m.ID)
	_, err = p.Blobs.Stat(ctx, key)
	switch {
	case err == nil:
		size, err := p.download(ctx, key, path)
		if err != nil {
			return 0, err
		}
		return size, p.dropSegments(ctx, m.ID, segs)
	case !errors.Is(err, blob.ErrNotFound):
		return 0, fmt.Errorf("look for original of media %d: %w", m.ID, err)
	case len(segs) == 0:
		return 0, fmt.Errorf("media %d has neither segments nor an original", m.ID)
	}
	return p.assemble(ctx, m, segs, path)
}

// download copies object key to a new file at path.
func (p *Processor) download(ctx context.Context, key, path string) (int64, error) {
	r, info, err := p.Blobs.Get(ctx, key)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", key, err)
	}
	defer r.Close()
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("create working copy of %s: %w", key, err)
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != info.Size {
		err = fmt.Errorf("read %d of %d bytes", n, info.Size)
	}
	if err != nil {
		return 0, fmt.Errorf("download %s: %w", key, err)
	}
	return n, nil
}

// assemble combines the newest copy of each segment, in index order, into
// the original (through blob.Multiparter when the store has it) and into a
// new file at path, then deletes every segment copy.
func (p *Processor) assemble(ctx context.Context, m storage.Media, segs []storage.MediaSegment, path string) (int64, error) {
	latest := newestCopies(segs)
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("create working file: %w", err)
	}
	defer f.Close()
	var size int64
	if mp, ok := p.Blobs.(blob.Multiparter); ok {
		size, err = p.assembleParts(ctx, mp, m, latest, f)
	} else {
		size, err = p.assembleWhole(ctx, m, latest, f)
	}
	if err != nil {
		return 0, fmt.Errorf("assemble media %d: %w", m.ID, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("write working file: %w", err)
	}
	return size, p.dropSegments(ctx, m.ID, segs)
}

// newestCopies keeps the newest copy of each index from segs, which are
// ordered by index and then arrival.
func newestCopies(segs []storage.MediaSegment) []storage.MediaSegment {
	var out []storage.MediaSegment
	for _, s := range segs {
		if n := len(out); n > 0 && out[n-1].Index == s.Index {
			out[n-1] = s
			continue
		}
		out = append(out, s)
	}
	return out
}

// partGroups splits segs into runs of consecutive segments of at least
// blob.MinPartSize bytes each; the last run may be smaller.
func partGroups(segs []storage.MediaSegment) [][]storage.MediaSegment {
	var groups [][]storage.MediaSegment
	start, size := 0, int64(0)
	for i, s := range segs {
		size += s.Size
		if size >= blob.MinPartSize {
			groups = append(groups, segs[start:i+1])
			start, size = i+1, 0
		}
	}
	if start < len(segs) {
		groups = append(groups, segs[start:])
	}
	return groups
}

// assembleParts uploads the segments as the parts of a multipart upload of
// the original, writing the same bytes to f as they stream by.
func (p *Processor) assembleParts(ctx context.Context, mp blob.Multiparter, m storage.Media, segs []storage.MediaSegment, f *os.File) (int64, error) {
	key := storage.MediaOriginalKey(m.ID)
	id, err := mp.CreateMultipart(ctx, key, m.MediaType)
	if err != nil {
		return 0, err
	}
	var parts []blob.Part
	var total int64
	for i, group := range partGroups(segs) {
		part, err := p.uploadPart(ctx, mp, key, id, i+1, group, f)
		if err != nil {
			p.abort(ctx, mp, key, id)
			return 0, err
		}
		parts = append(parts, part)
		total += part.Size
	}
	if _, err := mp.CompleteMultipart(ctx, key, id, parts); err != nil {
		p.abort(ctx, mp, key, id)
		return 0, err
	}
	return total, nil
}

// uploadPart streams one group of segments into part number of upload id,
// tee-ing the bytes into f.
func (p *Processor) uploadPart(ctx context.Context, mp blob.Multiparter, key, id string, number int, group []storage.MediaSegment, f *os.File) (blob.Part, error) {
	var size int64
	for _, s := range group {
		size += s.Size
	}
	src := &segmentReader{ctx: ctx, blobs: p.Blobs, segs: group}
	defer src.Close()
	tee := &countingWriter{w: f}
	part, err := mp.UploadPart(ctx, key, id, number, io.TeeReader(src, tee), size)
	if err != nil {
		return blob.Part{}, err
	}
	if tee.err != nil || tee.n != size {
		return blob.Part{}, fmt.Errorf("part %d: %d of %d bytes reached the working file: %v", number, tee.n, size, tee.err)
	}
	part.Size = size
	return part, nil
}

// abort discards an unfinished multipart upload, even when ctx is done.
func (p *Processor) abort(ctx context.Context, mp blob.Multiparter, key, id string) {
	if err := mp.AbortMultipart(context.WithoutCancel(ctx), key, id); err != nil {
		logctx.OrDefault(p.Logger).WarnContext(ctx, "abort multipart upload of media original", "key", key, "err", err)
	}
}

// assembleWhole, for stores without multipart uploads, writes the segments
// to f and stores f as the original.
func (p *Processor) assembleWhole(ctx context.Context, m storage.Media, segs []storage.MediaSegment, f *os.File) (int64, error) {
	src := &segmentReader{ctx: ctx, blobs: p.Blobs, segs: segs}
	defer src.Close()
	size, err := io.Copy(f, src)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	if err := p.Blobs.Put(ctx, storage.MediaOriginalKey(m.ID), f, size, m.MediaType); err != nil {
		return 0, err
	}
	return size, nil
}

// dropSegments deletes every stored copy of media id's segments (objects,
// then records) once the original holds their bytes.
func (p *Processor) dropSegments(ctx context.Context, id int64, segs []storage.MediaSegment) error {
	if len(segs) == 0 {
		return nil
	}
	for _, s := range segs {
		if err := p.Blobs.Delete(ctx, s.Key); err != nil {
			return fmt.Errorf("delete segment %d of media %d: %w", s.Index, id, err)
		}
	}
	return p.Store.DeleteMediaSegments(ctx, id)
}

// segmentReader reads segments one after the other, opening each only when
// it is reached, and checks that each object holds exactly its recorded
// size.
type segmentReader struct {
	ctx   context.Context
	blobs blob.Store
	segs  []storage.MediaSegment
	cur   io.ReadCloser
	lr    *io.LimitedReader
}

func (r *segmentReader) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for r.cur != nil || len(r.segs) > 0 {
		if r.cur == nil {
			if err := r.open(); err != nil {
				return 0, err
			}
		}
		n, err := r.lr.Read(b)
		if n > 0 {
			return n, nil
		}
		if err == io.EOF && r.lr.N > 0 {
			return 0, fmt.Errorf("segment %d ended %d bytes short", r.segs[0].Index, r.lr.N)
		}
		if err == io.EOF {
			r.closeCurrent()
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read segment %d: %w", r.segs[0].Index, err)
		}
	}
	return 0, io.EOF
}

// open starts reading the first remaining segment.
func (r *segmentReader) open() error {
	s := r.segs[0]
	rc, info, err := r.blobs.Get(r.ctx, s.Key)
	if err != nil {
		return fmt.Errorf("open segment %d: %w", s.Index, err)
	}
	if info.Size != s.Size {
		rc.Close()
		return fmt.Errorf("segment %d (%s) holds %d bytes, its record says %d", s.Index, s.Key, info.Size, s.Size)
	}
	r.cur, r.lr = rc, &io.LimitedReader{R: rc, N: s.Size}
	return nil
}

// closeCurrent ends the segment read to its size and moves to the next.
func (r *segmentReader) closeCurrent() {
	r.cur.Close()
	r.cur, r.lr = nil, nil
	r.segs = r.segs[1:]
}

// Close releases the segment being read, if any.
func (r *segmentReader) Close() error {
	if r.cur != nil {
		return r.cur.Close()
	}
	return nil
}

// countingWriter counts what it writes to w and keeps the first error.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}
