package fence

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
)

// bufferedResponse holds next's final response until the keeper is done,
// and passes its informational (1xx) ones through at once.
type bufferedResponse struct {
	w       http.ResponseWriter // the client's, for 1xx responses
	header  http.Header
	status  int // the final status; 0 until one is written
	invalid int // the first status no fenced response carries; 0 if none
	body    bytes.Buffer
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
	h.Del(RefusedHeader)
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
	maps.Copy(w.Header(), b.header)
	w.Header().Del(RefusedHeader) // it marks the fence's answers alone
	w.WriteHeader(max(b.status, http.StatusOK))
	_, _ = w.Write(b.body.Bytes())
}
