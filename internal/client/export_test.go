package client

// QueueLen returns how many requests wait for the writer: a test waits for
// a request to be queued instead of sleeping.
func QueueLen(c *Client) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// InFlight returns how many ordinary requests were sent on the current
// connection and not yet answered.
func InFlight(c *Client) int {
	c.in.mu.Lock()
	defer c.in.mu.Unlock()
	return len(c.in.ordinary.items) - c.in.ordinary.head
}
