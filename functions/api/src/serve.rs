//! The embedded HTTP server loop: hyper's HTTP/1 connection with the limits a
//! server facing the public needs and `axum::serve` does not expose: a
//! deadline for each request head, which also closes silent, half-open and
//! idle keep-alive connections, and a cap on open connections.

use axum::Router;
use axum::extract::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tower::ServiceExt;

/// The caller's network address, when the runtime knows it: the peer of the
/// TCP connection embedded, the source IP of the API Gateway request on Lambda.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub IpAddr);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConnectionLimits {
    /// From a connection's opening, or the end of its previous answer, to the
    /// end of the next request head.
    pub header_timeout: Duration,
    /// Open connections at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// Open connections from one address at once: past it a new connection
    /// is answered 429 and closed, so one client cannot take every
    /// connection (the embedded server's stand-in for a tenant's share:
    /// connections come before credentials).
    pub per_address: usize,
    /// How long open connections may take to finish at shutdown.
    pub drain: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(20),
            max_connections: 1024,
            per_address: 256,
            drain: Duration::from_secs(30),
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves; then stops accepting,
/// lets open connections finish their requests, and returns.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // Connections per address as fair shares, the address standing in for
    // the tenant; the semaphore above bounds them all.
    let addresses = platform::shares::Shares::new(
        "connections",
        platform::shares::Limits {
            per_tenant: limits.per_address.max(1),
            overall: usize::MAX,
        },
    );
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            _ = &mut shutdown => break,
            p = permits.clone().acquire_owned() => p.expect("the semaphore is never closed"),
        };
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: back off, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let Ok(from) = addresses.admit(&peer.ip().to_string()) else {
            drop(permit);
            connections.spawn(refuse(stream, REFUSAL_WAIT));
            continue;
        };
        connections.spawn(connection(
            stream,
            peer,
            app.clone(),
            limits,
            stopping.clone(),
            (permit, from),
        ));
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    let _ = stop.send(true);
    let drained = tokio::time::timeout(limits.drain, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            open = connections.len(),
            "connections still open after the drain period"
        );
        connections.abort_all();
    }
    Ok(())
}

async fn connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: ConnectionLimits,
    mut stopping: watch::Receiver<bool>,
    _held: (tokio::sync::OwnedSemaphorePermit, platform::shares::Share),
) {
    let service = tower::service_fn(move |mut request: Request<Incoming>| {
        request.extensions_mut().insert(ClientIp(peer.ip()));
        app.clone().oneshot(request.map(axum::body::Body::new))
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true)
        // Above the limit the routes answer (in JSON), so hyper's bare 431 is
        // only a backstop.
        .max_headers(crate::limits::MAX_HEADERS * 2);
    let conn = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
    tokio::pin!(conn);
    let stop = async move {
        let _ = stopping.wait_for(|s| *s).await;
    };
    let finished = tokio::select! {
        r = conn.as_mut() => Some(r),
        _ = stop => None,
    };
    let result = match finished {
        Some(r) => r,
        None => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, %peer, "connection closed");
    }
}

/// Longest a refused connection waits for its request, and then for its
/// client to read the answer and close: refusals are not bounded in number
/// (they hold no permit), so a flood's descriptors are bounded in time
/// instead. Not the header timeout: a refusal holds no permit, and a busy
/// client (5,000 long-polls from one process on two cores) may write its
/// request, or read its answer, seconds after its connect.
const REFUSAL_WAIT: Duration = Duration::from_secs(5);

/// The answer to a connection past its address's share, then the close.
/// Answered before the client writes, or closed before it reads, a busy
/// client's HTTP library reports a broken connection instead of the 429.
async fn refuse(mut stream: tokio::net::TcpStream, wait: Duration) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const BODY: &str = r#"{"detail":"too many open connections from this address; retry shortly"}"#;
    let answer = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 1\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{BODY}",
        BODY.len()
    );
    // The request first (so the close does not reset it unread), then the
    // answer, then what else comes until the client closes; a client that
    // stalls past the wait is not waited for.
    let mut head = [0u8; 8192];
    let _ = tokio::time::timeout(wait, stream.read(&mut head)).await;
    let _ = tokio::time::timeout(wait, async {
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
        while matches!(stream.read(&mut head).await, Ok(n) if n > 0) {}
    })
    .await;
}

/// A background task that ends when its owner does.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
