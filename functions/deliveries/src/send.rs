//! One HTTP(S) POST to a checked address: connect to exactly that address
//! (TLS names the URL's host), short timeouts, and at most a few KiB of the
//! answer read before the connection is dropped.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use platform::webhooks::address::Target;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How long a receiver may take: to accept the connection, and to answer.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub connect: Duration,
    pub answer: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: Duration::from_secs(5),
            answer: Duration::from_secs(10),
        }
    }
}

/// Bytes of an answer's body read (and dropped): enough to finish a small
/// answer cleanly, never a receiver's stream.
const ANSWER_READ: usize = 4096;

/// Sends `body` with `headers`; the receiver's status, or why there was none.
pub async fn post(
    target: &Target,
    headers: &[(&str, String)],
    body: Bytes,
    timeouts: Timeouts,
) -> Result<u16, String> {
    let started = tokio::time::Instant::now();
    let tcp = tokio::time::timeout(
        timeouts.connect,
        tokio::net::TcpStream::connect(target.addr),
    )
    .await
    .map_err(|_| format!("no connection within {:?}", timeouts.connect))?
    .map_err(|e| format!("connection failed: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let left = timeouts.answer;
    let exchange = async {
        if target.url.scheme() == "https" {
            let name = server_name(&target.url)?;
            let tls = tokio_rustls::TlsConnector::from(tls_config()?)
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS failed: {e}"))?;
            exchange(TokioIo::new(tls), target, headers, body).await
        } else {
            exchange(TokioIo::new(tcp), target, headers, body).await
        }
    };
    tokio::time::timeout(
        left.saturating_sub(started.elapsed()).max(left / 2),
        exchange,
    )
    .await
    .map_err(|_| format!("no answer within {left:?}"))?
}

/// The name TLS checks the certificate against: the URL's host, an IP
/// literal as an address (its text in a URL keeps IPv6's brackets, which no
/// certificate names).
fn server_name(url: &url::Url) -> Result<rustls::pki_types::ServerName<'static>, String> {
    use rustls::pki_types::ServerName;
    match url.host() {
        Some(url::Host::Ipv4(ip)) => Ok(ServerName::IpAddress(std::net::IpAddr::V4(ip).into())),
        Some(url::Host::Ipv6(ip)) => Ok(ServerName::IpAddress(std::net::IpAddr::V6(ip).into())),
        Some(url::Host::Domain(name)) => {
            ServerName::try_from(name.to_string()).map_err(|e| format!("bad server name: {e}"))
        }
        None => Err("has no host".into()),
    }
}

async fn exchange<T>(
    io: T,
    target: &Target,
    headers: &[(&str, String)],
    body: Bytes,
) -> Result<u16, String>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("HTTP handshake failed: {e}"))?;
    let conn = tokio::spawn(conn);
    let url = &target.url;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    let host = match url.port() {
        Some(p) => format!("{}:{p}", url.host_str().unwrap_or_default()),
        None => url.host_str().unwrap_or_default().to_string(),
    };
    let mut req = hyper::Request::post(path)
        .header(hyper::header::HOST, host)
        .header(hyper::header::CONTENT_TYPE, "application/json")
        .header(hyper::header::USER_AGENT, "marketlab-webhooks/1")
        .header(hyper::header::CONNECTION, "close");
    for (name, value) in headers {
        req = req.header(*name, value);
    }
    let req = req
        .body(Full::new(body))
        .map_err(|e| format!("bad request: {e}"))?;
    let answer = sender
        .send_request(req)
        .await
        .map_err(|e| format!("request failed: {e}"))?;
    let status = answer.status().as_u16();
    // A little of the body, so a small answer completes; the rest is dropped.
    let _ = Limited::new(answer.into_body(), ANSWER_READ)
        .collect()
        .await;
    conn.abort();
    Ok(status)
}

/// The platform's trust roots, loaded once.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                let _ = roots.add(cert);
            }
            if roots.is_empty() {
                return Err("no trusted root certificates on this system".into());
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| format!("TLS setup failed: {e}"))?
                .with_root_certificates(roots)
                .with_no_client_auth();
            Ok(Arc::new(config))
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::ServerName;

    #[test]
    fn tls_names_an_ip_literal_by_its_address_and_a_name_by_itself() {
        let name = |u: &str| server_name(&url::Url::parse(u).unwrap()).unwrap();
        assert_eq!(
            name("https://[2606:4700::1111]:8443/in"),
            ServerName::IpAddress(
                "2606:4700::1111"
                    .parse::<std::net::IpAddr>()
                    .unwrap()
                    .into()
            )
        );
        assert_eq!(
            name("https://93.184.216.34/in"),
            ServerName::IpAddress("93.184.216.34".parse::<std::net::IpAddr>().unwrap().into())
        );
        assert_eq!(
            name("https://hooks.example/in"),
            ServerName::try_from("hooks.example").unwrap()
        );
    }
}
