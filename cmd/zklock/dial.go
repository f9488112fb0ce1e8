package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/client"
)

// connectNotice is how long connecting may take before zklock says it is
// connecting, and why the attempts so far failed: a quick connection says
// nothing, nor does a first server that refuses when the next one answers.
// Whatever failed first is said at most connectNotice after it.
const connectNotice = time.Second

// connectGrace is how long, once --connect-timeout has passed, zklock
// waits for NewSession's own error, which says more than the timeout.
const connectGrace = 100 * time.Millisecond

// dialer connects a Session and says, while it does, why the attempts
// fail: one line on stderr for each new cause ("cannot connect to
// 127.0.0.1:1: connection refused"), as soon as connectNotice has passed,
// while the session keeps retrying until --connect-timeout; on a terminal, a
// progress line below them, erased once connected. --quiet silences all
// but the final failure, which names the last cause.
type dialer struct {
	c      *cli
	f      *connFlags
	log    *dialLog
	began  time.Time
	said   map[string]bool // the cause lines said
	drawn  bool            // a progress line is on the terminal
	spoke  bool            // anything was said
	notice bool            // connectNotice has passed
}

func newDialer(c *cli, f *connFlags) *dialer {
	return &dialer{c: c, f: f, log: newDialLog(), began: time.Now(), said: map[string]bool{}}
}

// connect is zklock.NewSession that returns when ctx ends. NewSession itself
// returns only once the connection attempt in progress has ended: against a
// server that accepts and never answers, up to a quarter of the session
// timeout later. The abandoned attempt closes its session, if it gets one,
// when it returns.
func (d *dialer) connect(ctx context.Context, opts []zklock.SessionOption) (*zklock.Session, error) {
	type result struct {
		s   *zklock.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := zklock.NewSession(ctx, opts...)
		done <- result{s, err}
	}()
	notice := time.NewTimer(connectNotice)
	defer notice.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	defer d.erase()
	for {
		select {
		case r := <-done:
			return r.s, r.err
		case <-ctx.Done():
			// NewSession ends with ctx too, mostly at once, and its error
			// names what it waited for (a silent server, say): take it if
			// it comes within connectGrace.
			t := time.NewTimer(connectGrace)
			defer t.Stop()
			select {
			case r := <-done:
				if r.s != nil {
					r.s.Close()
				}
				if r.err != nil && errors.Is(r.err, ctx.Err()) {
					return nil, r.err
				}
			case <-t.C:
				go func() {
					if r := <-done; r.s != nil {
						r.s.Close()
					}
				}()
			}
			return nil, ctx.Err()
		case <-notice.C:
			d.notice = true
			d.say(fmt.Sprintf("connecting to %s (giving up after --connect-timeout %v)", d.f.servers, d.f.connectTimeout))
			d.sayCauses()
		case <-d.log.changed:
			d.sayCauses()
		case <-tick.C:
			d.draw()
		}
	}
}

// say writes a line, above the progress line on a terminal. Off a
// terminal it is said once; on one the progress line says it.
func (d *dialer) say(line string) {
	if d.f.quiet {
		return
	}
	d.spoke = true
	if d.c.tty && strings.HasPrefix(line, "connecting to ") {
		d.draw()
		return
	}
	d.erase()
	d.c.warnf("%s", line)
	d.draw()
}

// sayCauses says the causes of failed attempts not said yet, once
// connectNotice has passed.
func (d *dialer) sayCauses() {
	if !d.notice {
		return
	}
	for _, f := range d.log.take() {
		line := fmt.Sprintf("cannot connect to %s: %s; retrying until --connect-timeout %v", f.server, describe(f.err), d.f.connectTimeout)
		if !d.said[line] {
			d.said[line] = true
			d.say(line)
		}
	}
}

// draw rewrites the progress line, on a terminal, once connectNotice has
// passed.
func (d *dialer) draw() {
	if !d.c.tty || d.f.quiet || !d.notice {
		return
	}
	d.drawn = true
	fmt.Fprintf(d.c.stderr, "\r%sconnecting to %s: %v (giving up after %v)\x1b[K", d.c.prefix(), d.f.servers,
		time.Since(d.began).Round(time.Second), d.f.connectTimeout)
}

// erase clears the progress line.
func (d *dialer) erase() {
	if d.drawn {
		fmt.Fprint(d.c.stderr, "\r\x1b[K")
		d.drawn = false
	}
}

// lastCause describes why the last attempt failed, "" if none did; with
// several servers it names the one that failed.
func (d *dialer) lastCause(several bool) string {
	f, ok := d.log.last()
	switch {
	case !ok:
		return ""
	case several:
		return f.server + ": " + describe(f.err)
	}
	return describe(f.err)
}

// hint is what the final failure suggests, from the last cause.
func (d *dialer) hint() string {
	f, ok := d.log.last()
	switch {
	case ok && isTLS(f.err):
		return "check --tls-ca, --tls-cert and --tls-key, and that the servers listen with TLS there"
	case ok && errors.As(f.err, new(*net.DNSError)):
		return "check --servers or $ZK_SERVERS"
	case ok && errors.As(f.err, new(*client.NotZooKeeperError)):
		return notZooKeeperHint
	}
	return "is ZooKeeper running there? 'zklock dev-server' starts one to try things"
}

// silentHint is the hint for a server that accepts connections and does
// not answer.
const silentHint = "a server that accepts connections and does not answer is paused, overloaded or not ZooKeeper: " +
	"remove it from --servers, or give --connect-timeout more time"

// notZooKeeperHint is the hint for a server that answered in another
// protocol.
const notZooKeeperHint = "check --servers: give the servers' client port (clientPort, 2181 by default), not the " +
	"AdminServer's (8080) or another service's"

// describe names the cause of a failed connection attempt.
func describe(err error) string {
	var dns *net.DNSError
	var nz *client.NotZooKeeperError
	switch {
	case errors.As(err, &nz):
		return nz.Error()
	case errors.As(err, &dns) && dns.IsNotFound:
		return "no such host " + dns.Name
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot resolve %s: %s", dns.Name, dns.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case isTLS(err):
		msg := err.Error()
		if _, after, ok := strings.Cut(msg, "TLS handshake with "); ok {
			if _, cause, ok := strings.Cut(after, ": "); ok {
				msg = cause
			}
		}
		return "TLS handshake failed: " + msg
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by the server"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "no answer within the handshake timeout"
	}
	return oneLine(err.Error())
}

// isTLS reports whether err is a failed TLS handshake.
func isTLS(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var al tls.AlertError
	var rh tls.RecordHeaderError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &al) ||
		errors.As(err, &rh) || strings.Contains(err.Error(), "TLS handshake")
}
