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
// base (http.DefaultTransport if nil) with the Header set to h's token.
//
// A request's token is fixed when it is first sent: h's token then, or the
// one the caller set in the request's Header (set it when the body is
// computed, to fix the token across retries of your own). A request that
// http.Client makes to follow a redirect carries the token of the request
// it follows, and base's own re-sends (a request retried on a fresh
// connection, its body from GetBody) are the request as first sent. A
// request is sent only while h holds its token: one made while h holds
// nothing (token 0 or less) returns an error wrapping ErrInvalidToken, and
// one whose token h no longer holds (the hold was lost, perhaps taken
// again with a later token, while the request was redirected) an error
// wrapping ErrHoldChanged: what it carries was made under a hold that
// ended, and must not be written under a later one.
//
// A response is not interpreted: a 409 Conflict from a Handler (with the
// RefusedHeader "stale") says the token is stale (a later holder has
// written), and the caller should stop acting on the resource.
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
	token, err := t.token(req)
	if err != nil {
		// A RoundTripper closes the body, even on errors.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("%w: %s %s not sent", err, req.Method, req.URL.Redacted())
	}
	// A RoundTripper must not modify the request it is given.
	out := req.Clone(req.Context())
	out.Header.Set(Header, strconv.FormatInt(token, 10))
	resp, err := t.base.RoundTrip(out)
	if resp != nil && resp.Request != out {
		// http.Client's redirect reads the token it carried here
		// (Request.Response.Request), whatever base did.
		resp.Request = out
	}
	return resp, err
}

// token returns the token req must carry, if h holds it.
func (t *transport) token(req *http.Request) (int64, error) {
	if t.h == nil {
		return 0, fmt.Errorf("%w: fence.Transport's Holder", ErrNilArgument)
	}
	held := t.h.Token()
	fixed, err := fixedToken(req)
	switch {
	case err != nil:
		return 0, err
	case fixed == 0 && held <= 0:
		return 0, fmt.Errorf("%w: %d (nothing is held)", ErrInvalidToken, held)
	case fixed != 0 && held != fixed:
		return 0, fmt.Errorf("%w: the request carries token %d, the holder holds %d", ErrHoldChanged, fixed, held)
	}
	return max(fixed, held), nil
}

// fixedToken returns the token fixed for req, 0 if none is: the caller's
// Header, or the one of the request whose redirect made req.
func fixedToken(req *http.Request) (int64, error) {
	v := req.Header.Values(Header)
	for r := req; len(v) == 0 && r.Response != nil && r.Response.Request != nil; {
		r = r.Response.Request
		v = r.Header.Values(Header)
	}
	switch {
	case len(v) == 0:
		return 0, nil
	case len(v) > 1:
		return 0, fmt.Errorf("%w: %d %s headers", ErrInvalidToken, len(v), Header)
	}
	token, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil || token <= 0 {
		return 0, fmt.Errorf("%w: %s: %.40q", ErrInvalidToken, Header, v[0])
	}
	return token, nil
}
