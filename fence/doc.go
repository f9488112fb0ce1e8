// Package fence makes a resource refuse a lock holder that no longer holds:
// the check that a zklock fencing token needs on the resource's side.
//
// A holder can be stopped for any length of time (a GC pause, a frozen VM,
// SIGSTOP) between checking that it holds and writing; meanwhile its
// session can expire and another holder write. Every zklock hold carries a
// Token that strictly increases over the acquisitions of a lock, so the
// resource can keep the highest token it has admitted and refuse a lower
// one. This package is that check, for three kinds of resource:
//
//   - a SQL database (Fence, through database/sql): a table of (resource,
//     highest token admitted) and Admit, one statement inside the caller's
//     transaction that admits the transaction only if its token is not
//     lower than the stored one, and raises it; the row lock it takes
//     orders the transactions of one resource; a refusal rolls the
//     transaction back. Do wraps a transaction around it; AdmitAll and
//     DoAll fence several resources in one fixed order;
//   - an HTTP service (Handler, on the server): the token in the request
//     header Zklock-Token, 409 Conflict for a stale one, the highest token
//     per resource kept in memory (Memory) or in the database fence
//     (Fence.Keeper, in the transaction the handler writes through);
//   - an HTTP client (Transport): sets the header from a hold, fixed for a
//     request and its redirects, and sends nothing once that hold ended.
//
// A stale write is refused with a *StaleTokenError carrying both tokens
// (errors.Is(err, ErrStaleToken)).
//
// Tokens compare only between holds of one lock: fence each resource with
// the lock that protects it. The fence protects only what is written under
// its check (the transaction, the wrapped handler); docs/fencing.md says
// what it cannot do, gives the SQL for other engines, and fences a shell
// job run by zklock run (ZKLOCK_TOKEN) in one psql statement.
//
// The package imports no database driver and nothing of zklock: a token is
// an int64, a hold anything with Token() int64. It is a module of its own,
// so that importers of zklock get none of the drivers its tests use.
package fence
