package client

import (
	"strings"
	"sync"
)

// watchKey names a watch as the server keeps it: one per session, path and
// kind.
type watchKey struct {
	path string
	kind WatchKind
}

// delivery is an event for one Watch; final ends the watch.
type delivery struct {
	w     *Watch
	ev    Event
	final bool
}

// registry is the client's copy of the watches the server holds for the
// session: what is restored after a reconnect, and where each event goes.
// A watch is linked when the reply that set it is read, and unlinked when
// it fires (one-shot), is removed, or the session ends. The reader links
// and routes; the writer's setup of a new connection snapshots; callers
// unlink.
type registry struct {
	mu        sync.Mutex
	m         map[watchKey][]*Watch
	recursive int // keys of kind WatchPersistentRecursive
}

func (g *registry) link(w *Watch) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = make(map[watchKey][]*Watch)
	}
	k := watchKey{w.path, w.kind}
	if len(g.m[k]) == 0 && k.kind == WatchPersistentRecursive {
		g.recursive++
	}
	g.m[k] = append(g.m[k], w)
	w.linked = true
}

// take removes key k and adds an event for each of its watches to dst.
func (g *registry) take(dst []delivery, k watchKey, ev Event, final bool) []delivery {
	ws := g.m[k]
	if len(ws) == 0 {
		return dst
	}
	ev.Watched, ev.Kind = k.path, k.kind
	for _, w := range ws {
		dst = append(dst, delivery{w: w, ev: ev, final: final})
	}
	if final {
		g.drop(k)
	}
	return dst
}

func (g *registry) drop(k watchKey) {
	for _, w := range g.m[k] {
		w.linked = false
	}
	delete(g.m, k)
	if k.kind == WatchPersistentRecursive {
		g.recursive--
	}
}

// route adds to dst the deliveries of a node event, as ZooKeeper's watch
// semantics have it: a data change or creation fires the node's data and
// exist watches, a deletion those and its child watch, a child change its
// child watch; a persistent watch on the node sees all of them, and a
// recursive one on the node or above it all but child changes. One-shot
// watches are unlinked.
func (g *registry) route(dst []delivery, typ EventType, path string) []delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	ev := Event{Type: typ, Path: path}
	switch typ {
	case EventNodeCreated, EventNodeDataChanged:
		dst = g.take(dst, watchKey{path, WatchData}, ev, true)
		dst = g.take(dst, watchKey{path, WatchExist}, ev, true)
	case EventNodeDeleted:
		dst = g.take(dst, watchKey{path, WatchData}, ev, true)
		dst = g.take(dst, watchKey{path, WatchExist}, ev, true)
		dst = g.take(dst, watchKey{path, WatchChildren}, ev, true)
	case EventNodeChildrenChanged:
		dst = g.take(dst, watchKey{path, WatchChildren}, ev, true)
	default:
		return dst
	}
	dst = g.take(dst, watchKey{path, WatchPersistent}, ev, false)
	if g.recursive == 0 || typ == EventNodeChildrenChanged {
		return dst
	}
	for p := path; ; p = parent(p) {
		dst = g.take(dst, watchKey{p, WatchPersistentRecursive}, ev, false)
		if p == "/" {
			return dst
		}
	}
}

// parent returns the parent of an absolute path; "/" is its own.
func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// endAll unlinks every watch and adds its final event, EventNotWatching
// with err, to dst.
func (g *registry) endAll(dst []delivery, err error) []delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.m {
		dst = g.take(dst, k, Event{Type: EventNotWatching, Path: k.path, Err: err}, true)
	}
	return dst
}

// end unlinks the watches of the given kinds on path, with err.
func (g *registry) end(dst []delivery, path string, kinds []WatchKind, err error) []delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, kind := range kinds {
		dst = g.take(dst, watchKey{path, kind}, Event{Type: EventNotWatching, Path: path, Err: err}, true)
	}
	return dst
}

// Types of removeWatches (Watcher.WatcherType), and the kinds of watch
// each removes on the server: ZooKeeper 3.8 keeps data and exist watches
// in one table, child watches in another, and a persistent watch in both.
const (
	removeChildren int32 = 1
	removeData     int32 = 2
	removeAny      int32 = 3
)

var removedKinds = map[int32][]WatchKind{
	removeChildren: {WatchChildren, WatchPersistent, WatchPersistentRecursive},
	removeData:     {WatchData, WatchExist, WatchPersistent, WatchPersistentRecursive},
	removeAny:      {WatchData, WatchExist, WatchChildren, WatchPersistent, WatchPersistentRecursive},
}

// unlink removes w. If w was the last watch of the server's tables on its
// path, it returns the removeWatches type that clears them, and true: the
// server's watch serves no one and can be removed. A watch of another
// kind on the same path that shares a table keeps the server's watch.
func (g *registry) unlink(w *Watch) (int32, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !w.linked {
		return 0, false
	}
	k := watchKey{w.path, w.kind}
	ws := g.m[k]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			break
		}
	}
	w.linked = false
	if len(ws) > 0 {
		g.m[k] = ws
		return 0, false
	}
	g.drop(k)
	typ := removeData
	switch w.kind {
	case WatchChildren:
		typ = removeChildren
	case WatchPersistent, WatchPersistentRecursive:
		typ = removeAny
	}
	for _, kind := range removedKinds[typ] {
		if len(g.m[watchKey{w.path, kind}]) > 0 {
			return 0, false
		}
	}
	return typ, true
}
