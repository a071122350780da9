//! Where a webhook may be sent: https to a public address only. Checked
//! when an endpoint is registered and again before every attempt, on the
//! addresses the name resolves to then (a name that later resolves to a
//! private address, DNS rebinding, is refused at send time, and the
//! attempt connects to the address that was checked, not to a new lookup).

use async_trait::async_trait;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use url::Url;

/// Longest URL an endpoint may have.
pub const MAX_URL_BYTES: usize = 2048;

/// Turns a host and port into addresses (the system resolver by default;
/// tests give their own to play a rebinding name).
#[async_trait]
pub trait Resolve: Send + Sync {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>>;
}

/// The system's resolver, through tokio.
pub struct SystemResolver;

#[async_trait]
impl Resolve for SystemResolver {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        Ok(tokio::net::lookup_host((host, port)).await?.collect())
    }
}

/// The operator's rule for destinations.
#[derive(Clone)]
pub struct Policy {
    /// Allow plain http to loopback addresses (tests and local receivers);
    /// never other private ranges.
    pub allow_loopback: bool,
    pub resolver: Arc<dyn Resolve>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allow_loopback: false,
            resolver: Arc::new(SystemResolver),
        }
    }
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("allow_loopback", &self.allow_loopback)
            .finish()
    }
}

/// A checked destination: the URL and the one address to connect to.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: Url,
    pub addr: SocketAddr,
}

impl Policy {
    /// The URL's form alone: scheme, no credentials, a host.
    pub fn parse(&self, text: &str) -> Result<Url, String> {
        if text.len() > MAX_URL_BYTES {
            return Err(format!("longer than {MAX_URL_BYTES} bytes"));
        }
        let url = Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
        match url.scheme() {
            "https" => {}
            "http" if self.allow_loopback => {}
            "http" => return Err("must be https".into()),
            other => return Err(format!("must be https, not {other}")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("must not carry credentials".into());
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err("has no host".into());
        }
        Ok(url)
    }

    /// Parses, resolves and checks every address the host has now; the
    /// first is the one to connect to.
    pub async fn target(&self, text: &str) -> Result<Target, String> {
        let url = self.parse(text)?;
        let port = url.port_or_known_default().ok_or("has no port")?;
        let addrs: Vec<SocketAddr> = match url.host() {
            Some(url::Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
            Some(url::Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
            Some(url::Host::Domain(name)) => {
                let found = tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    self.resolver.resolve(name, port),
                )
                .await
                .map_err(|_| format!("{name} did not resolve in time"))?
                .map_err(|e| format!("{name} does not resolve: {e}"))?;
                if found.is_empty() {
                    return Err(format!("{name} has no address"));
                }
                found
            }
            None => return Err("has no host".into()),
        };
        for a in &addrs {
            let ip = canonical(a.ip());
            if ip.is_loopback() {
                if !self.allow_loopback {
                    return Err(format!("resolves to {ip}, a loopback address"));
                }
                continue;
            }
            if let Some(why) = forbidden(ip) {
                return Err(format!("resolves to {ip}, {why}"));
            }
            if url.scheme() == "http" {
                return Err("must be https (plain http is allowed to loopback only)".into());
            }
        }
        Ok(Target {
            addr: addrs[0],
            url,
        })
    }
}

/// An IPv4 address written in IPv6 (mapped or NAT64) as itself.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return IpAddr::V4(v4);
            }
            let s = v6.segments();
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [a, b] = s[6].to_be_bytes();
                let [c, d] = s[7].to_be_bytes();
                return IpAddr::V4(Ipv4Addr::new(a, b, c, d));
            }
            IpAddr::V6(v6)
        }
        v4 => v4,
    }
}

/// Why an address is not a public one, if it is not.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "an unspecified address",
        (10, _, _) | (192, 168, _) => "a private address",
        (172, b, _) if (16..32).contains(&b) => "a private address",
        (100, b, _) if (64..128).contains(&b) => "a shared (carrier-grade NAT) address",
        (127, _, _) => "a loopback address",
        (169, 254, _) => "a link-local (cloud metadata) address",
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a reserved address",
        (198, b, _) if b == 18 || b == 19 => "a benchmarking address",
        (a, _, _) if a >= 224 => "a multicast or reserved address",
        _ => return None,
    })
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    Some(if ip.is_unspecified() {
        "an unspecified address"
    } else if ip.is_loopback() {
        "a loopback address"
    } else if s[0] & 0xfe00 == 0xfc00 {
        "a unique local (private) address"
    } else if s[0] & 0xffc0 == 0xfe80 || s[0] & 0xffc0 == 0xfec0 {
        "a link-local address"
    } else if s[0] & 0xff00 == 0xff00 {
        "a multicast address"
    } else if s[0] == 0x2001 && s[1] == 0x0db8 {
        "a documentation address"
    } else if s[..4] == [0x100, 0, 0, 0] {
        "a discard address"
    } else if s[..6] == [0, 0, 0, 0, 0, 0] {
        "an IPv4-compatible address"
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Names to addresses, changeable between lookups.
    #[derive(Default)]
    struct Names(Mutex<HashMap<String, Vec<IpAddr>>>);

    #[async_trait]
    impl Resolve for Names {
        async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
            let m = self.0.lock().unwrap();
            Ok(m.get(host)
                .map(|v| v.iter().map(|ip| SocketAddr::new(*ip, port)).collect())
                .unwrap_or_default())
        }
    }

    fn policy(names: Arc<Names>, allow_loopback: bool) -> Policy {
        Policy {
            allow_loopback,
            resolver: names,
        }
    }

    #[tokio::test]
    async fn private_link_local_metadata_and_loopback_are_refused() {
        let p = policy(Arc::new(Names::default()), false);
        for url in [
            "https://10.1.2.3/hook",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/",
            "https://127.0.0.1:8443/",
            "https://192.168.0.10/",
            "https://172.20.0.1/",
            "https://100.64.0.1/",
            "https://0.0.0.0/",
            "https://[fd00:ec2::254]/",
            "https://[fe80::1]/",
            "https://[::ffff:10.0.0.1]/",
            "https://[64:ff9b::a9fe:a9fe]/",
            "https://224.0.0.1/",
        ] {
            let e = p.target(url).await.unwrap_err();
            assert!(e.starts_with("resolves to"), "{url}: {e}");
        }
        for url in [
            "http://93.184.216.34/",
            "ftp://x/",
            "https://u:p@93.184.216.34/",
            "nope",
        ] {
            assert!(p.target(url).await.is_err(), "{url}");
        }
        let ok = p.target("https://93.184.216.34/hook").await.unwrap();
        assert_eq!(ok.addr, "93.184.216.34:443".parse().unwrap());
    }

    #[tokio::test]
    async fn loopback_is_allowed_only_when_the_operator_says_so_and_nothing_else_private() {
        let p = policy(Arc::new(Names::default()), true);
        assert!(p.target("http://127.0.0.1:9/").await.is_ok());
        assert!(p.target("http://[::1]:9/").await.is_ok());
        assert!(p.target("http://10.0.0.1/").await.is_err());
        assert!(p.target("https://169.254.169.254/").await.is_err());
        // Plain http to a public address stays refused.
        assert!(p.target("http://93.184.216.34/").await.is_err());
    }

    #[tokio::test]
    async fn a_name_is_checked_on_every_address_it_resolves_to_at_each_lookup() {
        let names = Arc::new(Names::default());
        let p = policy(names.clone(), false);
        let public: IpAddr = "93.184.216.34".parse().unwrap();
        names
            .0
            .lock()
            .unwrap()
            .insert("hooks.example.com".into(), vec![public]);
        assert!(p.target("https://hooks.example.com/x").await.is_ok());
        // The same name now also answers a private address: refused.
        names.0.lock().unwrap().insert(
            "hooks.example.com".into(),
            vec![public, "10.0.0.7".parse().unwrap()],
        );
        let e = p.target("https://hooks.example.com/x").await.unwrap_err();
        assert!(e.contains("10.0.0.7"), "{e}");
        assert!(p.target("https://nowhere.example.com/").await.is_err());
    }
}
