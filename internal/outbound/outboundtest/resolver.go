package outboundtest

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
)

// Resolver is a DNS server in memory for a *net.Resolver: each name has a
// list of answer sets, given in turn to its successive A (and AAAA)
// queries, the last one repeating. It plays a rebinding attacker: a name
// that resolves to a public address first and to a private one next.
type Resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	asked   map[string]int
}

// NewResolver answers name (without the root dot, any case) with the sets
// in turn.
func NewResolver(answers map[string][][]netip.Addr) *Resolver {
	r := &Resolver{answers: map[string][][]netip.Addr{}, asked: map[string]int{}}
	for name, sets := range answers {
		r.answers[strings.ToLower(name)] = sets
	}
	return r
}

// Net is the *net.Resolver asking r (outbound.Config.Resolver).
func (r *Resolver) Net() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		client, server := net.Pipe()
		go r.serve(server)
		return client, nil
	}}
}

// Asked is how many A queries name got.
func (r *Resolver) Asked(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.asked[strings.ToLower(name)]
}

// serve answers the queries of one stream connection (two-byte length
// framing, as the Go resolver speaks to a non-packet connection).
func (r *Resolver) serve(conn net.Conn) {
	defer conn.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(conn, n[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(conn, msg); err != nil {
			return
		}
		out, err := r.answer(msg)
		if err != nil {
			return
		}
		if _, err := conn.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(out))), out...)); err != nil {
			return
		}
	}
}

// DNS wire constants (RFC 1035) the resolver needs.
const (
	typeA       = 1
	typeAAAA    = 28
	headerLen   = 12
	flagsOK     = 0x8580 // response, authoritative, recursion desired and available
	rcodeNXName = 3
)

// answer builds the reply to one query: its question echoed, and the
// name's current addresses of the asked type.
func (r *Resolver) answer(query []byte) ([]byte, error) {
	if len(query) < headerLen {
		return nil, errors.New("short DNS query")
	}
	name, end, err := questionName(query)
	if err != nil {
		return nil, err
	}
	qtype := binary.BigEndian.Uint16(query[end:])
	question := query[headerLen : end+4]
	addrs, known := r.next(name, qtype)
	var answers [][]byte
	for _, a := range addrs {
		var rdata []byte
		switch {
		case qtype == typeA && a.Is4():
			b := a.As4()
			rdata = b[:]
		case qtype == typeAAAA && !a.Is4():
			b := a.As16()
			rdata = b[:]
		default:
			continue
		}
		rr := []byte{0xc0, headerLen} // the question's name
		rr = binary.BigEndian.AppendUint16(rr, qtype)
		rr = binary.BigEndian.AppendUint16(rr, 1) // class IN
		rr = binary.BigEndian.AppendUint32(rr, 0) // TTL
		rr = binary.BigEndian.AppendUint16(rr, uint16(len(rdata)))
		answers = append(answers, append(rr, rdata...))
	}
	flags := uint16(flagsOK)
	if !known {
		flags |= rcodeNXName
	}
	out := slices.Clone(query[:2]) // the query's id
	out = binary.BigEndian.AppendUint16(out, flags)
	out = binary.BigEndian.AppendUint16(out, 1)
	out = binary.BigEndian.AppendUint16(out, uint16(len(answers)))
	out = append(out, 0, 0, 0, 0)
	out = append(out, question...)
	for _, a := range answers {
		out = append(out, a...)
	}
	return out, nil
}

// questionName reads the first question's name (lower case, no root dot)
// and returns where its type begins.
func questionName(msg []byte) (string, int, error) {
	var labels []string
	i := headerLen
	for {
		if i >= len(msg) {
			return "", 0, errors.New("truncated DNS question")
		}
		n := int(msg[i])
		if n == 0 {
			i++
			break
		}
		if n&0xc0 != 0 || i+1+n > len(msg) {
			return "", 0, errors.New("unsupported DNS name")
		}
		labels = append(labels, strings.ToLower(string(msg[i+1:i+1+n])))
		i += 1 + n
	}
	if i+4 > len(msg) {
		return "", 0, errors.New("truncated DNS question")
	}
	return strings.Join(labels, "."), i, nil
}

// next is name's current answer set (moving on after an A query).
func (r *Resolver) next(name string, typ uint16) ([]netip.Addr, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sets, ok := r.answers[name]
	if !ok || len(sets) == 0 {
		return nil, false
	}
	i := min(r.asked[name], len(sets)-1)
	if typ == typeA {
		r.asked[name]++
	}
	return sets[i], true
}
