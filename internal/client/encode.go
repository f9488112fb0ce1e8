package client

// appendRequest appends r as one frame: the request header (xid, opcode)
// and the jute record of its opcode.
func appendRequest(b []byte, r *request) []byte {
	b, at := beginFrame(b)
	b = appendInt32(b, r.xid)
	b = appendInt32(b, r.op)
	b = appendBody(b, r)
	return endFrame(b, at)
}

func appendBody(b []byte, r *request) []byte {
	switch r.op {
	case opCreate, opCreate2, opCreateContainer:
		return appendCreate(b, r.path, r.data, r.acl, r.flags)
	case opCreateTTL:
		return appendInt64(appendCreate(b, r.path, r.data, r.acl, r.flags), r.ttl)
	case opDelete, opCheck: // DeleteRequest, CheckVersionRequest
		return appendInt32(appendString(b, r.path), r.version)
	case opExists, opGetData, opGetChildren2: // path, watch
		return appendBool(appendString(b, r.path), r.watch != nil)
	case opSetData:
		b = appendBuffer(appendString(b, r.path), r.data)
		return appendInt32(b, r.version)
	case opGetACL, opSync:
		return appendString(b, r.path)
	case opSetACL:
		return appendInt32(appendACL(appendString(b, r.path), r.acl), r.version)
	case opMulti:
		r.nops = len(r.ops)
		return appendMulti(b, r.ops)
	case opAuth: // AuthPacket: type (always 0), scheme, auth
		return appendBuffer(appendString(appendInt32(b, 0), r.scheme), r.data)
	case opSetWatches, opSetWatches2:
		return r.restore.append(b)
	case opAddWatch, opRemoveWatches: // path, mode or watcher type
		return appendInt32(appendString(b, r.path), r.flags)
	}
	return b // ping, closeSession: the header alone
}

func appendCreate(b []byte, path string, data []byte, acl []ACL, flags int32) []byte {
	b = appendString(b, path)
	b = appendBuffer(b, data)
	b = appendACL(b, acl)
	return appendInt32(b, flags)
}
