package client

// restore is the body of one setWatches request: watches the session held
// on its previous connection, to be set again on the new one. The server
// sets each, or fires it at once if its node changed after zxid (the last
// zxid the client saw), so that no change in between is missed; it
// re-adds persistent watches without events for what they missed.
type restore struct {
	zxid                                    int64
	data, exist, child, persistent, recurse []string
}

func (r *restore) lists() [5]*[]string {
	return [5]*[]string{&r.data, &r.exist, &r.child, &r.persistent, &r.recurse}
}

// kinds is the watch kind of each of lists, in order.
var restoreKinds = [5]WatchKind{WatchData, WatchExist, WatchChildren, WatchPersistent, WatchPersistentRecursive}

// opcode is the request that carries r: setWatches2 (ZooKeeper 3.6 and
// later) only when it restores a persistent watch. For one-shot watches
// setWatches is the same request and every server version has it; a
// persistent watch exists only if the server accepted addWatch, so it
// knows setWatches2 too. No server version needs to be detected.
func (r *restore) opcode() int32 {
	if len(r.persistent)+len(r.recurse) > 0 {
		return opSetWatches2
	}
	return opSetWatches
}

func (r *restore) append(b []byte) []byte {
	b = appendInt64(b, r.zxid)
	b = appendStrings(b, r.data)
	b = appendStrings(b, r.exist)
	b = appendStrings(b, r.child)
	if r.opcode() == opSetWatches2 {
		b = appendStrings(b, r.persistent)
		b = appendStrings(b, r.recurse)
	}
	return b
}

// restores returns the setWatches requests that restore every watch in
// the registry, each carrying at most setWatchesBatch bytes of paths.
func (g *registry) restores(zxid int64) []*restore {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*restore
	cur, size := (*restore)(nil), 0
	for k := range g.m {
		if cur == nil || size+len(k.path) > setWatchesBatch {
			cur, size = &restore{zxid: zxid}, 0
			out = append(out, cur)
		}
		l := cur.lists()[k.kind-1]
		*l = append(*l, k.path)
		size += len(k.path) + 4
	}
	return out
}

// failed ends the watches of r, which the server did not restore (the
// request failed): their owners must look again.
func (g *registry) failed(dst []delivery, r *restore, err error) []delivery {
	for i, l := range r.lists() {
		for _, p := range *l {
			dst = g.end(dst, p, []WatchKind{restoreKinds[i]}, err)
		}
	}
	return dst
}
