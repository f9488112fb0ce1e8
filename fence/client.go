package fence

import (
	"fmt"
	"net/http"
	"strconv"
)

// Holder is what the client side needs of a hold: its fencing token.
// Every zklock hold has it (Mutex, ReentrantMutex, RWMutex, Lease, Term),
// and returns 0 when it holds nothing.
type Holder interface {
	Token() int64
}

// Transport returns an http.RoundTripper that sends every request through
// base (http.DefaultTransport if nil) with the Header set to h's token, read
// as each request is sent. A request made while h holds nothing (its token
// is 0 or less) is not sent: RoundTrip returns an error wrapping
// ErrInvalidToken.
//
// A response is not interpreted: a 409 Conflict from a Handler says the
// token is stale (a later holder has written), and the caller should stop
// acting on the resource.
func Transport(h Holder, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{h: h, base: base}
}

type transport struct {
	h    Holder
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	token := t.h.Token()
	if token <= 0 {
		// A RoundTripper closes the body, even on errors.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %d (nothing is held): %s %s not sent", ErrInvalidToken, token, req.Method, req.URL.Redacted())
	}
	// A RoundTripper must not modify the request it is given.
	out := req.Clone(req.Context())
	out.Header.Set(Header, strconv.FormatInt(token, 10))
	return t.base.RoundTrip(out)
}
