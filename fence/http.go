package fence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
)

// Header is the request header that carries a hold's fencing token, in
// decimal: "Zklock-Token: 8589934592". Transport sets it; Handler reads it.
const Header = "Zklock-Token"

// HandlerOption configures Handler.
type HandlerOption func(*handlerOptions)

type handlerOptions struct {
	resource func(*http.Request) string
}

// WithResource sets how Handler names the resource a request writes
// (default: the request's URL path, r.URL.Path). The server decides, never
// a client: a resource named by the request itself would let a stale holder
// name one that no later holder has written yet.
func WithResource(fn func(r *http.Request) string) HandlerOption {
	return func(o *handlerOptions) { o.resource = fn }
}

// Handler wraps next with a fence: a request reaches next only if its
// token (Header) is not lower than the highest k admitted for the
// request's resource (WithResource); k then keeps the request's token.
// Every request through it is fenced, so wrap the routes that write.
//
// It answers, without calling next:
//   - 428 Precondition Required when the request has no token header: the
//     resource requires a token, and a client that sent none is not
//     fenced, whatever it holds (a request that is not conditional on the
//     token, in RFC 6585's terms);
//   - 400 Bad Request when the header is not one positive decimal int64;
//   - 409 Conflict when the token is stale (the body names both tokens):
//     a later holder has written;
//   - 503 Service Unavailable when k fails (the database is unreachable,
//     the request's context ended), and 500 when the resource is "".
//
// next's response is buffered and sent once k.Do returns: with
// Fence.Keeper, after the transaction committed (Tx gives next that
// transaction), so a client is never told of a write that did not commit;
// a response with a status of 400 or more rolls the transaction back. next
// cannot stream its response.
func Handler(k Keeper, next http.Handler, opts ...HandlerOption) http.Handler {
	o := handlerOptions{resource: func(r *http.Request) string { return r.URL.Path }}
	for _, opt := range opts {
		opt(&o)
	}
	return &fenced{k: k, next: next, o: o}
}

type fenced struct {
	k    Keeper
	next http.Handler
	o    handlerOptions
}

// errRefused: next answered with an error status, so its writes roll back.
var errRefused = errors.New("zklock: the handler answered with an error status")

func (h *fenced) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, status, err := requestToken(r)
	if err != nil {
		http.Error(w, err.Error(), status)
		return
	}
	resp := &bufferedResponse{header: make(http.Header)}
	err = h.k.Do(r.Context(), h.o.resource(r), token, func(ctx context.Context) error {
		h.next.ServeHTTP(resp, r.WithContext(ctx))
		if resp.status >= http.StatusBadRequest {
			return errRefused
		}
		return nil
	})
	var stale *StaleTokenError
	switch {
	case err == nil, errors.Is(err, errRefused):
		resp.send(w)
	case errors.As(err, &stale):
		http.Error(w, err.Error(), http.StatusConflict)
	case errors.Is(err, ErrInvalidResource):
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		http.Error(w, "zklock: fence: "+err.Error(), http.StatusServiceUnavailable)
	}
}

// requestToken reads the token header, with the status that refuses it.
func requestToken(r *http.Request) (int64, int, error) {
	vals := r.Header.Values(Header)
	switch len(vals) {
	case 0:
		return 0, http.StatusPreconditionRequired, fmt.Errorf("zklock: this resource is fenced: send the %s header", Header)
	case 1:
	default:
		return 0, http.StatusBadRequest, fmt.Errorf("%w: %d %s headers", ErrInvalidToken, len(vals), Header)
	}
	token, err := strconv.ParseInt(vals[0], 10, 64)
	if err != nil || token <= 0 {
		return 0, http.StatusBadRequest, fmt.Errorf("%w: %s: %q", ErrInvalidToken, Header, vals[0])
	}
	return token, 0, nil
}

// bufferedResponse holds next's response until the keeper is done.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

func (b *bufferedResponse) send(w http.ResponseWriter) {
	maps.Copy(w.Header(), b.header)
	w.WriteHeader(max(b.status, http.StatusOK))
	_, _ = w.Write(b.body.Bytes())
}
