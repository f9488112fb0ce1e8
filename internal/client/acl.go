package client

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
)

// ACL is one entry of a node's access control list: the permissions Perms
// granted to the identity ID in Scheme ("world"/"anyone", "digest"/
// "user:hash", "auth"/"", "ip"/"addr", "x509"/"CN=...").
type ACL struct {
	Perms  int32
	Scheme string
	ID     string
}

// Permissions (ZooDefs.Perms).
const (
	PermRead   int32 = 1 << 0
	PermWrite  int32 = 1 << 1
	PermCreate int32 = 1 << 2
	PermDelete int32 = 1 << 3
	PermAdmin  int32 = 1 << 4
	PermAll    int32 = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// WorldACL grants perms to everyone.
func WorldACL(perms int32) []ACL { return []ACL{{Perms: perms, Scheme: "world", ID: "anyone"}} }

// AuthACL grants perms to every identity the creating session has
// authenticated as (the "auth" scheme; the server substitutes the
// identities, and refuses the ACL with ErrInvalidACL if there is none).
func AuthACL(perms int32) []ACL { return []ACL{{Perms: perms, Scheme: "auth", ID: ""}} }

// DigestACL grants perms to the digest identity user:password, which a
// session acquires with AddAuth("digest", "user:password"). The ACL holds
// user:base64(sha1(user:password)), as ZooKeeper's DigestAuthenticationProvider
// computes it, never the password.
func DigestACL(perms int32, user, password string) []ACL {
	sum := sha1.Sum([]byte(user + ":" + password))
	return []ACL{{Perms: perms, Scheme: "digest", ID: user + ":" + base64.StdEncoding.EncodeToString(sum[:])}}
}

// GetACL returns the ACL and Stat of the node at path.
func (c *Client) GetACL(ctx context.Context, path string) ([]ACL, Stat, error) {
	r := newRequest(opGetACL, path)
	if err := c.call(ctx, r); err != nil {
		return nil, Stat{}, err
	}
	acl, st, err := r.acls, r.stat, r.failure()
	release(r)
	return acl, st, err
}

// SetACL sets the ACL of the node at path if its ACL version is version
// (-1: any), and returns its new Stat.
func (c *Client) SetACL(ctx context.Context, path string, acl []ACL, version int32) (Stat, error) {
	r := newRequest(opSetACL, path)
	r.acl, r.version = acl, version
	if err := c.call(ctx, r); err != nil {
		return Stat{}, err
	}
	st, err := r.stat, r.failure()
	release(r)
	return st, err
}
