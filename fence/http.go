package fence

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Header is the request header that carries a hold's fencing token, in
// decimal: "Zklock-Token: 8589934592". Transport sets it; Handler reads it.
const Header = "Zklock-Token"

// RefusedHeader is the response header that marks Handler's own answers,
// so that a client tells them from the wrapped handler's (a 409 of its
// own, say): its value says why ("stale", "no-token", "invalid-token",
// "invalid-resource", "invalid-status", "keeper-failed", "commit-unknown",
// "misconfigured"). Handler removes it, in any spelling and as a trailer,
// from the wrapped handler's responses, but keeps the mark of a Handler
// nested in the wrapped handler (its refusal is the fence's too).
const RefusedHeader = "Zklock-Refused"

// HandlerOption configures Handler.
type HandlerOption func(*handlerOptions)

type handlerOptions struct {
	resource func(*http.Request) string
}

// WithResource sets how Handler names the resource a request writes
// (default: the request's URL path, r.URL.Path). The name must be the
// thing the handler writes, one name per thing: the path is chosen by the
// client, which is safe only while the handler writes what the path names
// and nothing else, under no other path (a handler that folds case, or
// strips a trailing slash, must map the path the same way here). Never
// take the name from a part of the request that does not decide what is
// written (a header, a parameter): a stale holder could name a resource no
// later holder has written yet, and be admitted.
func WithResource(fn func(r *http.Request) string) HandlerOption {
	return func(o *handlerOptions) { o.resource = fn }
}

// Handler wraps next with a fence: a request reaches next only if its
// token (Header) is not lower than the highest k admitted for the
// request's resource (WithResource); k then keeps the request's token.
// Every request through it is fenced, so wrap the routes that write.
//
// It answers, without calling next, with the RefusedHeader set:
//   - 428 Precondition Required when the request has no token header: the
//     resource requires a token, and a client that sent none is not
//     fenced, whatever it holds (a request that is not conditional on the
//     token, in RFC 6585's terms);
//   - 400 Bad Request when the header is not one positive decimal int64,
//     or the resource name is refused (ErrInvalidResource: over
//     MaxResource bytes, not UTF-8, a NUL), and 500 when it is "";
//   - 409 Conflict when the token is stale (the body names both tokens):
//     a later holder has written;
//   - 503 Service Unavailable when k fails (the database is unreachable,
//     the request's context ended), marked "commit-unknown" when the
//     context ended while COMMIT was in flight (ErrCommitUnknown: the
//     write may stand), and 500 for a nil k or next.
//
// next's final response is buffered and sent once k.Do returns: with
// Fence.Keeper, after the transaction committed (Tx gives next that
// transaction), so a client is never told of a write that did not commit.
// Its status is the last final (not 1xx) status next wrote, and once next
// wrote one of 400 or more, that one: such a response rolls the
// transaction back, even after next wrote a success or a body. A status
// outside 100-599, or 101 (a fenced response cannot switch protocols),
// rolls back too, and Handler answers 500. Informational responses (1xx,
// such as 103 Early Hints) are sent at once, with next's header as it is
// then, and do not count as the status. next cannot stream its response.
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

var (
	// errRefused: next answered with an error status, so its writes roll
	// back and its response is sent.
	errRefused = errors.New("zklock: the handler answered with an error status")
	// errInvalidStatus: next wrote a status no response carries; its
	// writes roll back and Handler answers 500.
	errInvalidStatus = errors.New("zklock: fence: the handler wrote a status no fenced response can carry; its writes were rolled back")
)

func (h *fenced) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resource, token, no := h.admission(r)
	if no != nil {
		no.send(w)
		return
	}
	resp := &bufferedResponse{w: w, header: make(http.Header)}
	err := h.k.Do(r.Context(), resource, token, func(ctx context.Context) error {
		h.next.ServeHTTP(resp, r.WithContext(ctx))
		return resp.outcome()
	})
	if err == nil || errors.Is(err, errRefused) {
		resp.send(w)
		return
	}
	keeperRefusal(err).send(w)
}

// refusal is an answer of the fence's own, marked by the RefusedHeader.
type refusal struct {
	status int
	why    string
	err    error
}

func (f *refusal) send(w http.ResponseWriter) {
	markRefusal(w, f.why, f.status)
	w.Header().Set(RefusedHeader, f.why)
	http.Error(w, f.err.Error(), f.status)
}

// admission reads what the keeper is asked to admit, or the refusal of a
// request that cannot be.
func (h *fenced) admission(r *http.Request) (string, int64, *refusal) {
	if h.k == nil || h.next == nil {
		return "", 0, &refusal{http.StatusInternalServerError, "misconfigured", fmt.Errorf("%w: fence.Handler's keeper or handler", ErrNilArgument)}
	}
	token, status, err := requestToken(r)
	if err != nil {
		why := "invalid-token"
		if status == http.StatusPreconditionRequired {
			why = "no-token"
		}
		return "", 0, &refusal{status, why, err}
	}
	resource := h.o.resource(r)
	if err := checkResource(resource); err != nil {
		// "" is the server's mistake (WithResource); anything else may be
		// the request's path.
		status := http.StatusBadRequest
		if resource == "" {
			status = http.StatusInternalServerError
		}
		return "", 0, &refusal{status, "invalid-resource", err}
	}
	return resource, token, nil
}

// keeperRefusal answers the keeper's error: not an admitted request's.
func keeperRefusal(err error) *refusal {
	var stale *StaleTokenError
	switch {
	case errors.Is(err, errInvalidStatus):
		return &refusal{http.StatusInternalServerError, "invalid-status", err}
	case errors.As(err, &stale):
		return &refusal{http.StatusConflict, "stale", err}
	case errors.Is(err, ErrCommitUnknown):
		// The write may have committed: not "keeper-failed", which a
		// client may take for "nothing was written".
		return &refusal{http.StatusServiceUnavailable, "commit-unknown", err}
	case errors.Is(err, ErrNilArgument), errors.Is(err, ErrZeroFence):
		return &refusal{http.StatusInternalServerError, "misconfigured", err}
	}
	return &refusal{http.StatusServiceUnavailable, "keeper-failed", fmt.Errorf("zklock: fence: %w", err)}
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
		return 0, http.StatusBadRequest, fmt.Errorf("%w: %s: %.40q", ErrInvalidToken, Header, vals[0])
	}
	return token, 0, nil
}
