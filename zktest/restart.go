package zktest

import "fmt"

// Restart stops the server (as Stop does), writes its zoo.cfg again with
// opts applied over its current configuration, and starts it (as Start
// does): one step of a rolling restart that changes the servers'
// configuration under live clients. The options that apply are those of
// the server's own configuration: WithSyncLimit, WithTickTime,
// WithSessionTimeouts, WithFourLetterWords, WithJVMFlags and WithFsync;
// the server keeps its address, ports and data. The rest of the cluster
// is not touched (Cluster.SyncLimit and the like still report the
// configuration the cluster started with). It returns ErrUnmanaged for a
// server from ZKTEST_SERVERS and ErrNotSupported for a Docker one.
func (s *Server) Restart(opts ...Option) error {
	p, ok := s.ctl.(*process)
	if !ok {
		if s.c.external {
			return ErrUnmanaged
		}
		return ErrNotSupported
	}
	o := p.options()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return err
	}
	if err := s.Stop(); err != nil {
		return err
	}
	if err := writeConfig(o, s.c.tls, s.c.peers, s.c.nodes(), s.index); err != nil {
		return fmt.Errorf("zktest: write config: %w", err)
	}
	p.setOptions(o)
	return s.Start()
}

// nodes returns the managed nodes of the cluster, in server order; every
// server must be a local process.
func (c *Cluster) nodes() []*node {
	nodes := make([]*node, len(c.servers))
	for i, s := range c.servers {
		nodes[i] = s.ctl.(*process).n
	}
	return nodes
}

// options returns the configuration the server runs with.
func (p *process) options() options {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opts
}

// setOptions sets the configuration of the server's next launch.
func (p *process) setOptions(o options) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opts = o
}
