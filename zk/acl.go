package zk

import (
	"crypto/sha1"
	"encoding/base64"

	"github.com/zklock/zklock/internal/client"
)

// ACL is one entry of a node's access control list: the permissions Perms
// (PermRead, ..., PermAll, or'ed) granted to the identity ID in Scheme:
// "world" and "anyone" for everyone, "auth" (and "") for every identity the
// creating session authenticated as, "digest" and "user:base64(sha1)"
// (DigestACL), "ip" and an address, "x509" and a certificate's subject. It
// is a plain value; copy it freely.
type ACL struct {
	Perms  int32
	Scheme string
	ID     string
}

// Permissions of an ACL entry (ZooKeeper's ZooDefs.Perms).
const (
	PermRead   int32 = 1 << 0 // read the data, list the children
	PermWrite  int32 = 1 << 1 // set the data
	PermCreate int32 = 1 << 2 // create children
	PermDelete int32 = 1 << 3 // delete children
	PermAdmin  int32 = 1 << 4 // set the ACL
	PermAll    int32 = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// WorldACL grants perms to everyone.
func WorldACL(perms int32) []ACL { return []ACL{{Perms: perms, Scheme: "world", ID: "anyone"}} }

// AuthACL grants perms to every identity the creating session has
// authenticated as (zklock's WithDigestAuth, WithAuth, a client
// certificate with WithTLS). The server refuses it with ErrInvalidACL from
// a session that has none.
func AuthACL(perms int32) []ACL { return []ACL{{Perms: perms, Scheme: "auth", ID: ""}} }

// DigestACL grants perms to the digest identity user with password, which
// a session takes on with zklock's WithDigestAuth(user, password). The
// entry holds user:base64(sha1(user:password)), as ZooKeeper's digest
// provider computes it, never the password.
func DigestACL(perms int32, user, password string) []ACL {
	sum := sha1.Sum([]byte(user + ":" + password))
	return []ACL{{Perms: perms, Scheme: "digest", ID: user + ":" + base64.StdEncoding.EncodeToString(sum[:])}}
}

// MaxDataSize is the largest node data zklock's WithData and
// Election.Campaign accept: ZooKeeper's default jute.maxbuffer (1 MiB) less
// room for the rest of a create request. The whole create request, path
// and ACL included, must also fit the session's maximum request size
// (zklock's WithMaxRequestSize).
const MaxDataSize = 1<<20 - 1<<12

// toClientACL and fromClientACL convert at the boundary with the client.
func toClientACL(acl []ACL) []client.ACL {
	out := make([]client.ACL, len(acl))
	for i, a := range acl {
		out[i] = client.ACL{Perms: a.Perms, Scheme: a.Scheme, ID: a.ID}
	}
	return out
}

func fromClientACL(acl []client.ACL) []ACL {
	out := make([]ACL, len(acl))
	for i, a := range acl {
		out[i] = ACL{Perms: a.Perms, Scheme: a.Scheme, ID: a.ID}
	}
	return out
}
