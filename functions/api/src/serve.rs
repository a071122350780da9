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
    /// How long open connections may take to finish at shutdown.
    pub drain: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(20),
            max_connections: 1024,
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
        connections.spawn(connection(
            stream,
            peer,
            app.clone(),
            limits,
            stopping.clone(),
            permit,
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
    _permit: tokio::sync::OwnedSemaphorePermit,
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

/// A background task that ends when its owner does.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
