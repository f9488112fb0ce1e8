package session

// observer receives the creates the wire layer sees (create.go). Each
// connection's link (evidence.go) passes them on.
type observer Conn
