package fence

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"strings"
)

// bufferedResponse holds next's final response until the keeper is done,
// and passes its informational (1xx) ones through at once.
type bufferedResponse struct {
	w       http.ResponseWriter // the client's, for 1xx responses
	header  http.Header
	status  int // the final status; 0 until one is written
	invalid int // the first status no fenced response carries; 0 if none
	body    bytes.Buffer
	// refused is the RefusedHeader value of a fence's own refusal written
	// to this response by a Handler nested in next (markRefusal), and
	// refusedStatus its status: send keeps that mark while the status is
	// still the refusal's, where it strips every one next wrote itself.
	refused       string
	refusedStatus int
}

func (b *bufferedResponse) Header() http.Header { return b.header }

// WriteHeader keeps the last final status, except that an error status
// once written stays: the handler failed, whatever it wrote after.
func (b *bufferedResponse) WriteHeader(status int) {
	switch {
	case status < 100 || status > 599 || status == http.StatusSwitchingProtocols:
		if b.invalid == 0 {
			b.invalid = status
		}
	case status < 200:
		// net/http ignores a 1xx after the final status; so do we.
		if b.status == 0 {
			b.inform(status)
		}
	case b.status < http.StatusBadRequest:
		b.status = status
	}
}

// inform sends a 1xx with next's header as it is now (RFC 8297: an early
// hint carries the header fields the final response is expected to), and
// leaves the client's header map as it was.
func (b *bufferedResponse) inform(status int) {
	h := b.w.Header()
	saved := h.Clone()
	clear(h)
	maps.Copy(h, b.header)
	stripRefused(h)
	b.w.WriteHeader(status)
	clear(h)
	maps.Copy(h, saved)
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// outcome is what next's response makes of its writes: nil commits them.
func (b *bufferedResponse) outcome() error {
	switch {
	case b.invalid != 0:
		return fmt.Errorf("%w (status %d)", errInvalidStatus, b.invalid)
	case b.status >= http.StatusBadRequest:
		return errRefused
	}
	return nil
}

func (b *bufferedResponse) send(w http.ResponseWriter) {
	h := w.Header()
	maps.Copy(h, b.header)
	// The marker is the fence's answers' alone: next's own, in any
	// spelling, as a header or a trailer, never reaches the client; a
	// nested Handler's refusal (markRefusal) does.
	stripRefused(h)
	status := max(b.status, http.StatusOK)
	if b.refused != "" && status == b.refusedStatus {
		h.Set(RefusedHeader, b.refused)
		// This Handler may itself be nested in another's: pass the mark
		// on, or the next one out strips it.
		markRefusal(w, b.refused, status)
	}
	w.WriteHeader(status)
	_, _ = w.Write(b.body.Bytes())
}

// stripRefused removes from h every RefusedHeader that a handler could
// make net/http send: under any spelling of its key (h is a plain map, and
// net/http writes a key as it is; the client folds case), as a trailer
// declared with http.TrailerPrefix, and from the Trailer header's list, so
// that a value set after the body is not sent as a declared trailer.
func stripRefused(h http.Header) {
	for k := range h {
		name := k
		if len(k) >= len(http.TrailerPrefix) && strings.EqualFold(k[:len(http.TrailerPrefix)], http.TrailerPrefix) {
			name = k[len(http.TrailerPrefix):]
		}
		if strings.EqualFold(strings.TrimSpace(name), RefusedHeader) {
			delete(h, k)
		}
	}
	for k, vals := range h {
		if !strings.EqualFold(k, "Trailer") {
			continue
		}
		var kept []string
		for _, v := range vals {
			var names []string
			for n := range strings.SplitSeq(v, ",") {
				if n = strings.TrimSpace(n); n != "" && !strings.EqualFold(n, RefusedHeader) {
					names = append(names, n)
				}
			}
			if len(names) > 0 {
				kept = append(kept, strings.Join(names, ", "))
			}
		}
		if len(kept) == 0 {
			delete(h, k)
		} else {
			h[k] = kept
		}
	}
}

// markRefusal records why, a refusal answered with status, on the
// response of the Handler that w belongs to, if w is (or unwraps, as
// http.ResponseController does, to) a fenced handler's buffered response:
// a Handler nested in another's next then keeps its refusal marked
// through the outer one, which strips every marker next writes in its
// header. The mark is kept only when the refusal's status becomes the
// response's (no error status was written before it, which would stay)
// and is still its status at the end (a middleware between the two could
// rewrite it).
func markRefusal(w http.ResponseWriter, why string, status int) {
	for range 64 { // a chain of wrappers, bounded against a cycle
		switch rw := w.(type) {
		case *bufferedResponse:
			if rw.status < http.StatusBadRequest && rw.invalid == 0 {
				rw.refused, rw.refusedStatus = why, status
			}
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = rw.Unwrap()
		default:
			return
		}
	}
}
