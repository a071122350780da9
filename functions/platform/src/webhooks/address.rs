//! Where a webhook may be sent: https to a globally reachable unicast
//! address only. Checked when an endpoint is registered and again before
//! every attempt, on the addresses the name resolves to then (a name that
//! later resolves to a private address, DNS rebinding, is refused at send
//! time, and the attempt connects to the address that was checked, not to a
//! new lookup).
//!
//! The rule is an allow-list: an address passes only when IANA's
//! special-purpose registries (IPv4 and IPv6) say it is globally reachable,
//! after every IPv4 address written inside an IPv6 one (mapped, compatible,
//! SIIT, 6to4, Teredo, NAT64) is taken out and judged itself. Anything a
//! registry does not list as global, or that lies outside IPv6's global
//! unicast block, is refused, so a new special block cannot slip through.

use async_trait::async_trait;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
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

/// A server confined to this machine (test suites): destinations that pass
/// the policy but are not loopback are refused all the same, and each is
/// written to a log the suite checks, so a test that would have sent
/// traffic off the machine fails instead of sending it.
#[derive(Debug, Clone)]
pub struct Confinement {
    pub log: PathBuf,
}

impl Confinement {
    /// Variable naming the log; set, it confines every server of the process.
    pub const VARIABLE: &str = "MARKETLAB_OUTBOUND_LOG";

    /// The confinement `MARKETLAB_OUTBOUND_LOG` asks for, if any.
    pub fn from_env() -> Option<Arc<Confinement>> {
        std::env::var_os(Self::VARIABLE)
            .filter(|v| !v.is_empty())
            .map(|log| {
                Arc::new(Confinement {
                    log: PathBuf::from(log),
                })
            })
    }

    /// Records a refused destination (one line; appended, so every process
    /// of a suite can share one log).
    fn record(&self, url: &Url, addr: SocketAddr) {
        let line = format!(
            "{} refused {url} -> {addr}\n",
            chrono::Utc::now().to_rfc3339()
        );
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            tracing::error!(error = %e, log = %self.log.display(), "outbound log not written");
        }
        tracing::warn!(%url, %addr, "outbound destination refused: this server is confined to loopback");
    }
}

/// The operator's rule for destinations.
#[derive(Clone)]
pub struct Policy {
    /// Allow plain http to loopback addresses (tests and local receivers);
    /// never other private ranges.
    pub allow_loopback: bool,
    pub resolver: Arc<dyn Resolve>,
    /// Loopback only, whatever else passes (see [`Confinement`]).
    pub confine: Option<Arc<Confinement>>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allow_loopback: false,
            resolver: Arc::new(SystemResolver),
            confine: Confinement::from_env(),
        }
    }
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("allow_loopback", &self.allow_loopback)
            .field("confine", &self.confine)
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
    /// The URL's form alone: scheme, no credentials, no control characters,
    /// a host, a port that is not 0.
    pub fn parse(&self, text: &str) -> Result<Url, String> {
        if text.len() > MAX_URL_BYTES {
            return Err(format!("longer than {MAX_URL_BYTES} bytes"));
        }
        // The URL parser drops some of these silently (tabs, line ends,
        // trailing NULs); what is stored must be what was checked.
        if text.chars().any(|c| c.is_control() || c == ' ') {
            return Err("contains a space or a control character".into());
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
        if url.port() == Some(0) {
            return Err("has port 0".into());
        }
        Ok(url)
    }

    /// Where an attempt connects: [`Policy::check`], then, on a confined
    /// server, loopback only (anything else refused and logged).
    pub async fn target(&self, text: &str) -> Result<Target, String> {
        let target = self.check(text).await?;
        if let Some(confine) = &self.confine
            && !is_loopback(target.addr.ip())
        {
            confine.record(&target.url, target.addr);
            return Err(format!(
                "resolves to {}, off this machine: this server delivers to loopback only",
                target.addr.ip()
            ));
        }
        Ok(target)
    }

    /// Parses, resolves and checks every address the host has now; the
    /// first is the one to connect to. What registration checks.
    pub async fn check(&self, text: &str) -> Result<Target, String> {
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
            let ip = a.ip();
            if a.port() == 0 {
                return Err(format!("resolves to {a}, port 0"));
            }
            if is_loopback(ip) {
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

/// Loopback as the operating system connects to it: 127/8, ::1, and
/// 127/8 written as an IPv4-mapped address.
fn is_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Why an address may not be sent to, if it may not: `None` only for a
/// globally reachable unicast address (every IPv4 address embedded in an
/// IPv6 one judged too).
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// IANA's IPv4 special-purpose registry: every block not globally
/// reachable, plus multicast and broadcast (not unicast).
fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, d] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "a \"this network\" address",
        (10, _, _) | (192, 168, _) => "a private address",
        (172, b, _) if (16..32).contains(&b) => "a private address",
        (100, b, _) if (64..128).contains(&b) => "a shared (carrier-grade NAT) address",
        (127, _, _) => "a loopback address",
        (169, 254, _) => "a link-local (cloud metadata) address",
        // 192.0.0.9 and .10 (PCP and TURN anycast) are the global ones.
        (192, 0, 0) if d != 9 && d != 10 => "an IETF protocol assignment",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "a documentation address",
        (192, 88, 99) => "a deprecated 6to4 relay address",
        (198, 18 | 19, _) => "a benchmarking address",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved or broadcast address",
        _ => return None,
    })
}

/// IANA's IPv6 special-purpose registry, on the global unicast block
/// 2000::/3 alone; embedded IPv4 addresses judged by [`forbidden_v4`].
fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if let Some(v4) = embedded_v4(ip) {
        return forbidden_v4(v4);
    }
    // Teredo: the server's address in clear, the client's inverted.
    if s[0] == 0x2001 && s[1] == 0 {
        let server = Ipv4Addr::from(((s[2] as u32) << 16) | s[3] as u32);
        let client = Ipv4Addr::from(!(((s[6] as u32) << 16) | s[7] as u32));
        return forbidden_v4(server).or(forbidden_v4(client));
    }
    Some(if ip.is_unspecified() {
        "an unspecified address"
    } else if ip.is_loopback() {
        "a loopback address"
    } else if s[0] & 0xe000 != 0x2000 {
        match s[0] {
            0x0064 => "a local-use NAT64 address",
            0x0100 => "a discard address",
            x if x & 0xfe00 == 0xfc00 => "a unique local (private) address",
            x if x & 0xffc0 == 0xfe80 || x & 0xffc0 == 0xfec0 => "a link-local address",
            x if x & 0xff00 == 0xff00 => "a multicast address",
            _ => "not a global unicast address",
        }
    } else if s[0] == 0x2001 && s[1] < 0x200 {
        // 2001::/23, IETF protocol assignments: global only where listed
        // (PCP, TURN and DNS-SD anycast; AMT; AS112; ORCHIDv2; DRIP).
        let global = (s[1] == 0x1 && s[2..7] == [0; 5] && (1..=3).contains(&s[7]))
            || s[1] == 0x3
            || (s[1] == 0x4 && s[2] == 0x112)
            || (0x20..0x40).contains(&s[1]);
        if global {
            return None;
        }
        if s[1] == 0x2 && s[2] == 0 {
            "a benchmarking address"
        } else {
            "an IETF protocol assignment"
        }
    } else if (s[0] == 0x2001 && s[1] == 0x0db8) || (s[0] == 0x3fff && s[1] < 0x1000) {
        "a documentation address"
    } else {
        return None;
    })
}

/// The IPv4 address an IPv6 one carries, by any of the forms that mean
/// "this IPv4 address": mapped (::ffff:0:0/96), SIIT (::ffff:0:0:0/96),
/// compatible (::/96, beyond :: and ::1), 6to4 (2002::/16) and NAT64's
/// well-known prefix (64:ff9b::/96).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::from(((s[6] as u32) << 16) | s[7] as u32);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => Some(low),
        [0, 0, 0, 0, 0, 0, _, _] if !ip.is_unspecified() && !ip.is_loopback() => Some(low),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(low),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::from(((hi as u32) << 16) | lo as u32)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;
    use std::collections::HashMap;

    /// Names to addresses, changeable between lookups.
    #[derive(Default)]
    struct Names(Mutex<HashMap<String, Vec<IpAddr>>>);

    impl Names {
        fn set(&self, name: &str, ips: &[&str]) {
            let ips = ips.iter().map(|ip| ip.parse().unwrap()).collect();
            self.0.lock().insert(name.into(), ips);
        }
    }

    #[async_trait]
    impl Resolve for Names {
        async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
            let m = self.0.lock();
            Ok(m.get(host)
                .map(|v| v.iter().map(|ip| SocketAddr::new(*ip, port)).collect())
                .unwrap_or_default())
        }
    }

    fn policy(names: Arc<Names>, allow_loopback: bool) -> Policy {
        Policy {
            allow_loopback,
            resolver: names,
            confine: None,
        }
    }

    /// Addresses an attacker could name to reach this machine, its network
    /// or its cloud's metadata: every form the hardening campaign found
    /// accepted, then the classic ones.
    const REFUSED: [&str; 30] = [
        "2002:7f00:1::1",                       // 6to4 of 127.0.0.1
        "2002:a9fe:a9fe::1",                    // 6to4 of the metadata address
        "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
        "64:ff9b:1::a00:1",                     // local-use NAT64 of 10.0.0.1
        "64:ff9b:1::a9fe:a9fe",                 // local-use NAT64 of the metadata address
        "::ffff:0:7f00:1",                      // SIIT of 127.0.0.1
        "192.88.99.1",                          // deprecated 6to4 relay anycast
        "2001:2::1",                            // benchmarking
        "3fff::1",                              // documentation
        "10.1.2.3",
        "169.254.169.254",
        "192.168.0.10",
        "172.20.0.1",
        "100.64.0.1",
        "0.0.0.0",
        "192.0.0.1",
        "192.0.2.7",
        "198.18.0.1",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "fd00:ec2::254",
        "fe80::1",
        "fec0::1",
        "ff02::1",
        "::ffff:10.0.0.1",
        "::a9fe:a9fe",        // IPv4-compatible metadata
        "64:ff9b::a9fe:a9fe", // well-known NAT64 of the metadata address
        "2001:db8::1",
        "100::1",
    ];

    fn literal(ip: &str) -> String {
        if ip.contains(':') {
            format!("https://[{ip}]/hook")
        } else {
            format!("https://{ip}/hook")
        }
    }

    #[tokio::test]
    async fn every_address_that_is_not_globally_reachable_is_refused_at_registration() {
        let p = policy(Arc::new(Names::default()), false);
        for ip in REFUSED.iter().chain(&["127.0.0.1", "::1"]) {
            let url = literal(ip);
            let e = p.target(&url).await.unwrap_err();
            assert!(e.starts_with("resolves to"), "{url}: {e}");
        }
        for url in [
            "http://93.184.216.34/",
            "ftp://x/",
            "https://u:p@93.184.216.34/",
            "nope",
            "https://8.8.8.8:0/",
            "https://93.184.216.34/hook\0",
            "https://93.184.216.34/ho\tok",
            "https://93.184.216.34/hook\n",
            "https://93.184.216.34/\u{7f}",
        ] {
            assert!(p.target(url).await.is_err(), "{url:?}");
        }
    }

    #[tokio::test]
    async fn global_unicast_addresses_pass_in_every_form() {
        let p = policy(Arc::new(Names::default()), false);
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "192.0.0.9", // PCP anycast, global by the registry
            "2606:4700::1111",
            "2001:4860:4860::8888",
            "2002:5db8:d822::1",  // 6to4 of 93.184.216.34
            "64:ff9b::5db8:d822", // NAT64 of 93.184.216.34
            "::ffff:93.184.216.34",
            "2001:1::1",  // PCP anycast
            "2001:20::1", // ORCHIDv2
        ] {
            let url = literal(ip);
            let t = p
                .target(&url)
                .await
                .unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(t.addr.ip(), ip.parse::<IpAddr>().unwrap());
            assert_eq!(t.addr.port(), 443);
        }
    }

    #[tokio::test]
    async fn loopback_is_allowed_only_when_the_operator_says_so_and_nothing_else_private() {
        let p = policy(Arc::new(Names::default()), true);
        assert!(p.target("http://127.0.0.1:9/").await.is_ok());
        assert!(p.target("http://[::1]:9/").await.is_ok());
        assert!(p.target("http://10.0.0.1/").await.is_err());
        assert!(p.target("https://169.254.169.254/").await.is_err());
        // Embedded loopback is not the operator's loopback.
        assert!(p.target("https://[2002:7f00:1::1]/").await.is_err());
        assert!(p.target("https://[::ffff:0:7f00:1]/").await.is_err());
        // Plain http to a public address stays refused.
        assert!(p.target("http://93.184.216.34/").await.is_err());
    }

    #[tokio::test]
    async fn a_name_rebound_to_any_refused_form_is_refused_at_send_time() {
        let names = Arc::new(Names::default());
        let p = policy(names.clone(), false);
        for ip in REFUSED {
            names.set("hooks.example", &["93.184.216.34"]);
            assert!(p.target("https://hooks.example/x").await.is_ok());
            // After registration, the name answers the refused address too.
            names.set("hooks.example", &["93.184.216.34", ip]);
            let e = p.target("https://hooks.example/x").await.unwrap_err();
            assert!(e.starts_with("resolves to"), "{ip}: {e}");
            names.set("hooks.example", &[ip]);
            assert!(p.target("https://hooks.example/x").await.is_err(), "{ip}");
        }
        assert!(p.target("https://nowhere.example/").await.is_err());
    }

    #[tokio::test]
    async fn a_confined_server_refuses_and_logs_every_destination_off_the_machine() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("outbound.log");
        let p = Policy {
            confine: Some(Arc::new(Confinement { log: log.clone() })),
            ..policy(Arc::new(Names::default()), true)
        };
        assert!(p.target("http://127.0.0.1:9/in").await.is_ok());
        assert!(!log.exists(), "loopback is not logged");
        // Registration checks the address; only an attempt is confined.
        assert!(p.check("https://93.184.216.34/in").await.is_ok());
        assert!(!log.exists());
        let e = p.target("https://93.184.216.34/in").await.unwrap_err();
        assert!(e.contains("loopback only"), "{e}");
        let e = p
            .target("https://[2606:4700::1111]:8443/in")
            .await
            .unwrap_err();
        assert!(e.contains("loopback only"), "{e}");
        let lines = std::fs::read_to_string(&log).unwrap();
        let lines: Vec<&str> = lines.lines().collect();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].ends_with("refused https://93.184.216.34/in -> 93.184.216.34:443"));
        assert!(lines[1].ends_with("-> [2606:4700::1111]:8443"));
    }
}
