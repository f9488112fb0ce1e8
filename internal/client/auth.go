package client

import (
	"bytes"
	"context"
)

// AddAuth authenticates the session as auth in scheme (for "digest",
// auth is "user:password"). Once the server accepts it, the credential is
// also sent on every later connection, before any request. A rejected
// credential is final (see StateAuthFailed): the call returns
// ErrAuthFailed and the client closes. While the client is disconnected
// the call waits for a connection, or ctx.
func (c *Client) AddAuth(ctx context.Context, scheme string, auth []byte) error {
	if scheme == "" {
		return &Error{Op: "auth", Err: ErrBadArguments}
	}
	r := newRequest(opAuth, "")
	// A copy: the credential is kept, and sent again on every connection.
	r.xid, r.scheme, r.data = xidAuth, scheme, bytes.Clone(auth)
	if err := c.do(ctx, r); err != nil {
		return err
	}
	err := r.failure()
	release(r)
	return err
}

// addCredential records a credential the server accepted, once.
func (c *Client) addCredential(cr Credential) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, have := range c.creds {
		if have.Scheme == cr.Scheme && bytes.Equal(have.Auth, cr.Auth) {
			return
		}
	}
	// A new slice: priming reads the old one without the lock.
	c.creds = append(c.creds[:len(c.creds):len(c.creds)], cr)
}
