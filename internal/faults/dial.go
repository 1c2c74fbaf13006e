package faults

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// cancelDialer dials the run's connections through the fault proxy and its cancel requests
// around it. pgx sends a cancel request to a connection's peer address each time it gives
// up a connection in the middle of a statement (a caller's deadline, a reset); through the
// proxy, the faults cut that request's own connection as well, and a cancel request whose
// client goes away before PgBouncer forwarded it makes PgBouncer exit ("bad client state",
// PgBouncer before 1.20.1, as Debian 12 ships it): every later connection of the run is then
// refused. The faults are on the application's connections; a cancel is the pooler's
// business, so a connection made through the proxy names the upstream as its peer and the
// cancel goes there straight.
type cancelDialer struct {
	proxy    string   // the proxy's host:port, where the run's connections are made
	upstream net.Addr // the server's or pooler's address behind the proxy
	dialer   net.Dialer
	// Cancels counts the cancel requests dialled straight to the upstream.
	Cancels atomic.Int64
}

func newCancelDialer(proxy, upstream string) (*cancelDialer, error) {
	up, err := net.ResolveTCPAddr("tcp", upstream)
	if err != nil {
		return nil, fmt.Errorf("faults: reading the upstream address %q: %w", upstream, err)
	}
	// pgx's own dialer's keep-alive.
	return &cancelDialer{proxy: proxy, upstream: up, dialer: net.Dialer{KeepAlive: 5 * time.Minute}}, nil
}

// Dial is a pgconn.DialFunc.
func (d *cancelDialer) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if addr != d.proxy {
		if addr == d.upstream.String() {
			d.Cancels.Add(1)
		}
		return d.dialer.DialContext(ctx, network, addr)
	}
	c, err := d.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return peerConn{Conn: c, peer: d.upstream}, nil
}

// peerConn is a connection through the proxy that names the upstream as its peer.
type peerConn struct {
	net.Conn
	peer net.Addr
}

func (c peerConn) RemoteAddr() net.Addr { return c.peer }

// proxiedPool opens the run's pool: url's connections made through the proxy at proxyAddr
// in front of upstream, their cancel requests sent around it.
func proxiedPool(ctx context.Context, url, proxyAddr, upstream string, deadline time.Duration) (*pgxpool.Pool, *cancelDialer, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, nil, err
	}
	pc.MaxConns = 12
	// A connection must be made within a caller's longest deadline, or a busy machine's slow
	// start of a backend decides the run instead of the faults.
	pc.ConnConfig.ConnectTimeout = deadline
	d, err := newCancelDialer(proxyAddr, upstream)
	if err != nil {
		return nil, nil, err
	}
	pc.ConnConfig.DialFunc = d.Dial
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, nil, fmt.Errorf("faults: connecting through the proxy: %w", err)
	}
	return pool, d, nil
}
