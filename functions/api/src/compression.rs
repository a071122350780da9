//! Compressed answers, inside the caller's compute budget and only where
//! they pay (docs/decisions.md, "Compression inside the budget").
//!
//! - A tenant's answer ([`compress`], behind the auth layer): JSON, CSV,
//!   HTML and other text of [`MIN_BYTES`] or more is gzip'd (level 1) or
//!   brotli'd (quality 1), as the request's `Accept-Encoding` prefers
//!   (gzip on a tie: [`preferred_fast`]). The
//!   work runs on the compute pool under the caller's share and is counted
//!   as `compute_ms.compression` in `/usage`; a caller at its share, or
//!   whose month of compute is spent, gets the answer uncompressed.
//! - Arrow IPC streams and Parquet files are never HTTP-compressed (their
//!   float columns gzip by about a tenth). A client that wants fewer bytes
//!   asks for Arrow's own buffer compression with the `compression`
//!   parameter of the Arrow media range (`Accept:
//!   application/vnd.apache.arrow.stream; compression=zstd`, or `lz4`):
//!   the stream is re-encoded on the pool the same way, and its
//!   `Content-Type` carries the parameter.
//! - The large answers that are the same for every caller until the data
//!   changes (the indicator list, the catalogs, the report assets) are
//!   compressed once, at high levels, and kept ([`Precompressed`]); the
//!   public documents (`/openapi.json`, the documentation pages' scripts)
//!   once per encoding on first request ([`Fixed`]). Nothing else public
//!   (`/health`, `/auth-info`, the small pages) is compressed: it is small,
//!   and compressing for an unauthenticated caller would be work nobody's
//!   budget pays for.

use crate::arrow::{ARROW_STREAM, IpcCompression};
use crate::auth::{Caller, Tenant};
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use std::io::Write;
use std::sync::OnceLock;

/// Answers smaller than this go as they are: a TCP connection's first
/// flight (ten segments, about 14 KiB) carries them whole, so compressing
/// saves no round trip, and the fixed cost of a turn on the pool (its
/// place, the compute ledger) would be most of the time spent.
pub const MIN_BYTES: usize = 16 * 1024;

/// The `/usage` compute kind of compressing an answer.
pub const KIND: &str = "compression";

/// Levels for answers compressed as they are made: the fastest of each
/// codec but brotli's 0 (measured on the campaign's 2.9 MB correlation
/// answer, docs/decisions.md: gzip 1 takes 16-20 ms for 39% of the bytes,
/// gzip 6 159 ms for 35%; brotli 1 with a 64 KiB window 20 ms for 33%,
/// brotli 4 105 ms for 33%). Brotli 1 compresses better and as fast with
/// the small window than with a 4 MiB one (25 ms for 35.5%).
const GZIP_FAST: u32 = 1;
const BROTLI_FAST: u32 = 1;
const BROTLI_FAST_WINDOW: u32 = 16;

/// Brotli quality and window and gzip level for answers compressed once:
/// brotli 9 is within a few percent of the maximum (11) at a tenth of its
/// time.
const BROTLI_QUALITY: u32 = 9;
const BROTLI_WINDOW: u32 = 22;
const GZIP_BEST: u32 = 9;

/// An encoding a client accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Brotli,
}

impl Encoding {
    fn token(self) -> Option<&'static str> {
        match self {
            Encoding::Identity => None,
            Encoding::Gzip => Some("gzip"),
            Encoding::Brotli => Some("br"),
        }
    }
}

/// The encoding to answer with an answer compressed once: the one of gzip
/// and br with the higher `q` (br, the smaller, on a tie), identity when
/// neither is accepted. `*` stands for both.
pub fn preferred(headers: &HeaderMap) -> Encoding {
    choose(headers, Encoding::Brotli)
}

/// The encoding to compress an answer in as it is made: as [`preferred`],
/// but gzip on a tie. In the server brotli 1 took 65-78 ms of CPU for the
/// campaign's 2.9 MB answer (33% of its bytes) where gzip 1 took 21 ms
/// (39%): the caller pays for the time, and the bytes differ little.
pub fn preferred_fast(headers: &HeaderMap) -> Encoding {
    choose(headers, Encoding::Gzip)
}

fn choose(headers: &HeaderMap, tie: Encoding) -> Encoding {
    let (mut gzip, mut br, mut star) = (None, None, None);
    for value in headers.get_all(header::ACCEPT_ENCODING) {
        let Ok(text) = value.to_str() else { continue };
        for part in text.split(',') {
            let mut fields = part.split(';');
            let name = fields.next().unwrap_or("").trim().to_ascii_lowercase();
            let q = fields
                .filter_map(|f| f.trim().strip_prefix("q="))
                .filter_map(|q| q.trim().parse::<f32>().ok())
                .next()
                .unwrap_or(1.0);
            match name.as_str() {
                "gzip" | "x-gzip" => gzip = Some(q),
                "br" => br = Some(q),
                "*" => star = Some(q),
                _ => {}
            }
        }
    }
    let (gzip, br) = (gzip.or(star).unwrap_or(0.0), br.or(star).unwrap_or(0.0));
    if br > 0.0 && (br > gzip || (br == gzip && tie == Encoding::Brotli)) {
        Encoding::Brotli
    } else if gzip > 0.0 {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
}

fn gzip(body: &[u8], level: u32) -> Bytes {
    let mut gz = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 4 + 64),
        flate2::Compression::new(level),
    );
    gz.write_all(body).expect("writing to memory");
    gz.finish().expect("writing to memory").into()
}

fn brotli(body: &[u8], quality: u32, window: u32) -> Bytes {
    let mut out = Vec::with_capacity(body.len() / 4 + 64);
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 64 * 1024, quality, window);
        w.write_all(body).expect("writing to memory");
    }
    out.into()
}

/// `body` in `encoding` at the fast levels answers made per request use.
pub fn fast(body: &[u8], encoding: Encoding) -> Bytes {
    match encoding {
        Encoding::Identity => Bytes::copy_from_slice(body),
        Encoding::Gzip => gzip(body, GZIP_FAST),
        Encoding::Brotli => brotli(body, BROTLI_FAST, BROTLI_FAST_WINDOW),
    }
}

/// `body` in `encoding` at the high levels of answers made once.
fn best(body: &[u8], encoding: Encoding) -> Bytes {
    match encoding {
        Encoding::Identity => Bytes::copy_from_slice(body),
        Encoding::Gzip => gzip(body, GZIP_BEST),
        Encoding::Brotli => brotli(body, BROTLI_QUALITY, BROTLI_WINDOW),
    }
}

/// Adds `Vary: accept-encoding` unless a `Vary` already names it.
fn vary(headers: &mut HeaderMap) {
    let named = headers
        .get_all(header::VARY)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|n| n.trim().eq_ignore_ascii_case("accept-encoding"))
        });
    if !named {
        headers.append(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
}

/// An answer's media type, lower case, without parameters.
fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Media types that compress well: text of any kind and JSON. Arrow
/// streams, Parquet files and images are not among them.
fn compressible(media: &str) -> bool {
    media.starts_with("text/")
        || media == "application/json"
        || media.ends_with("+json")
        || media == "application/javascript"
        || media == "application/xml"
        || media == "image/svg+xml"
}

/// What the layer does with an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Nothing.
    Keep,
    /// Nothing, but an answer of this kind may come compressed: it varies
    /// with `Accept-Encoding`.
    Varies,
    /// Compressed in this `Content-Encoding`.
    Encode(Encoding),
    /// An Arrow stream, its buffers compressed with this codec.
    Arrow(IpcCompression),
}

fn plan(response: &Response, encoding: Encoding, ipc: Option<IpcCompression>) -> Plan {
    use axum::body::HttpBody;
    let status = response.status();
    // Errors are small and re-rendered outside (`error::render_errors`);
    // 204 and 206 have nothing to compress.
    if !status.is_success() || status.as_u16() == 204 || status.as_u16() == 206 {
        return Plan::Keep;
    }
    let headers = response.headers();
    if headers.contains_key(header::CONTENT_ENCODING) {
        return Plan::Keep;
    }
    let media = media_type(headers);
    // A body of unknown length (none is, today) goes as it comes.
    let big = response
        .body()
        .size_hint()
        .exact()
        .is_some_and(|n| n >= MIN_BYTES as u64);
    if media == ARROW_STREAM {
        return match ipc {
            Some(codec) if big => Plan::Arrow(codec),
            _ => Plan::Keep,
        };
    }
    if !compressible(&media) {
        return Plan::Keep;
    }
    match encoding {
        Encoding::Identity => Plan::Varies,
        e if big => Plan::Encode(e),
        _ => Plan::Varies,
    }
}

/// The state the layer needs: the compute pool and the usage books.
#[derive(Clone)]
pub struct Compressing(pub AppState);

/// The compression layer of tenant answers, inside the auth layer (it needs
/// the caller): see the module's documentation.
pub async fn compress(
    State(Compressing(state)): State<Compressing>,
    request: Request,
    next: Next,
) -> Response {
    let encoding = preferred_fast(request.headers());
    let ipc = crate::arrow::compression(request.headers());
    let caller = request.extensions().get::<Caller>().cloned();
    let mut response = next.run(request).await;
    let plan = plan(&response, encoding, ipc);
    if matches!(plan, Plan::Varies | Plan::Encode(_)) {
        vary(response.headers_mut());
    }
    if matches!(plan, Plan::Keep | Plan::Varies) {
        return response;
    }
    let Some(caller) = caller else {
        return response;
    };
    let (mut parts, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "reading an answer to compress");
            return crate::ApiError::internal().into_response();
        }
    };
    let as_it_is = |parts, body| Response::from_parts(parts, axum::body::Body::from(body));
    let Ok(state) = state.in_mode(caller.mode()) else {
        return as_it_is(parts, body);
    };
    let tenant = Tenant { state, caller };
    // A caller at its share of the pool, or whose month is spent, gets the
    // answer as it is: it is made, and identity is always acceptable.
    let Ok(place) = crate::compute::admit(&tenant, KIND).await else {
        return as_it_is(parts, body);
    };
    let input = body.clone();
    let made = place
        .run(move |_| match plan {
            Plan::Encode(e) => Ok(fast(&input, e)),
            Plan::Arrow(codec) => crate::arrow::recompress(&input, codec),
            Plan::Keep | Plan::Varies => Ok(input),
        })
        .await;
    let made = match made {
        Ok(Ok(made)) => made,
        Ok(Err(why)) => {
            tracing::error!(error = %why, "compressing an Arrow answer");
            return as_it_is(parts, body);
        }
        Err(_) => return as_it_is(parts, body),
    };
    match plan {
        Plan::Encode(e) => {
            if let Some(token) = e.token() {
                parts
                    .headers
                    .insert(header::CONTENT_ENCODING, HeaderValue::from_static(token));
            }
        }
        Plan::Arrow(codec) => {
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(codec.media_type()),
            );
        }
        Plan::Keep | Plan::Varies => {}
    }
    parts.headers.remove(header::CONTENT_LENGTH);
    as_it_is(parts, made)
}

/// One answer in each encoding, made once.
#[derive(Debug)]
pub struct Precompressed {
    content_type: &'static str,
    identity: Bytes,
    gzip: Bytes,
    br: Bytes,
}

impl Precompressed {
    /// Bytes held: the body in each encoding.
    pub fn bytes(&self) -> usize {
        self.identity.len() + self.gzip.len() + self.br.len()
    }

    pub fn new(content_type: &'static str, body: impl Into<Bytes>) -> Precompressed {
        let identity: Bytes = body.into();
        Precompressed {
            content_type,
            gzip: best(&identity, Encoding::Gzip),
            br: best(&identity, Encoding::Brotli),
            identity,
        }
    }

    /// Sizes in bytes: identity, gzip, brotli.
    pub fn sizes(&self) -> (usize, usize, usize) {
        (self.identity.len(), self.gzip.len(), self.br.len())
    }

    /// The uncompressed body.
    pub fn identity(&self) -> &Bytes {
        &self.identity
    }

    /// The answer in the encoding the request prefers.
    pub fn respond(&self, request: &HeaderMap) -> Response {
        let encoding = preferred(request);
        let body = match encoding {
            Encoding::Brotli => self.br.clone(),
            Encoding::Gzip => self.gzip.clone(),
            Encoding::Identity => self.identity.clone(),
        };
        encoded(self.content_type, body, encoding)
    }
}

fn encoded(content_type: &'static str, body: Bytes, encoding: Encoding) -> Response {
    let mut response = ([(header::CONTENT_TYPE, content_type)], body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if let Some(e) = encoding.token() {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(e));
    }
    response
}

/// A public answer that never changes while the process runs (the API
/// document, the documentation pages' scripts): each encoding made once,
/// at the high levels, when first asked for, off the async threads.
#[derive(Debug)]
pub struct Fixed {
    content_type: &'static str,
    identity: &'static [u8],
    gzip: OnceLock<Bytes>,
    br: OnceLock<Bytes>,
}

impl Fixed {
    pub const fn new(content_type: &'static str, identity: &'static [u8]) -> Fixed {
        Fixed {
            content_type,
            identity,
            gzip: OnceLock::new(),
            br: OnceLock::new(),
        }
    }

    /// The answer in the encoding the request prefers.
    pub async fn respond(&'static self, request: &HeaderMap) -> Response {
        let encoding = preferred(request);
        let cell = match encoding {
            Encoding::Identity => {
                return encoded(
                    self.content_type,
                    Bytes::from_static(self.identity),
                    encoding,
                );
            }
            Encoding::Gzip => &self.gzip,
            Encoding::Brotli => &self.br,
        };
        let body = match cell.get() {
            Some(b) => b.clone(),
            None => tokio::task::spawn_blocking(move || {
                cell.get_or_init(|| best(self.identity, encoding)).clone()
            })
            .await
            .expect("compressing a fixed answer"),
        };
        encoded(self.content_type, body, encoding)
    }
}

/// A value made from an `Arc`'d source (a catalog), off the async threads
/// (compressing a few MB takes a while), and kept in `memo` (the market data
/// store's) under `key` until the source is replaced (a data reload makes a
/// new `Arc`); `size` tells the memo what it holds.
pub async fn memoized<K, V>(
    memo: &platform::memo::Memo,
    key: &str,
    source: std::sync::Arc<K>,
    make: impl FnOnce(&K) -> V + Send + 'static,
    size: impl FnOnce(&V) -> usize,
) -> std::sync::Arc<V>
where
    K: Send + Sync + 'static,
    V: Send + Sync + 'static,
{
    if let Some(v) = memo.get(key, &source) {
        return v;
    }
    let from = source.clone();
    let value = tokio::task::spawn_blocking(move || make(&from))
        .await
        .expect("making a kept answer");
    let bytes = size(&value);
    let value = std::sync::Arc::new(value);
    memo.put(key, &source, value.clone(), bytes);
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn accept(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn the_client_chooses_the_encoding() {
        assert_eq!(preferred(&HeaderMap::new()), Encoding::Identity);
        assert_eq!(preferred(&accept("gzip, deflate, br")), Encoding::Brotli);
        assert_eq!(preferred(&accept("gzip")), Encoding::Gzip);
        assert_eq!(preferred(&accept("br;q=0.5, gzip;q=0.8")), Encoding::Gzip);
        assert_eq!(preferred(&accept("br;q=0, gzip;q=0")), Encoding::Identity);
        assert_eq!(preferred(&accept("*")), Encoding::Brotli);
        assert_eq!(preferred(&accept("*;q=0.5, br;q=0")), Encoding::Gzip);
        assert_eq!(preferred(&accept("identity")), Encoding::Identity);
        assert_eq!(preferred(&accept("GZIP;Q=1")), Encoding::Gzip);
        // Made per request: gzip on a tie, brotli when preferred or alone.
        assert_eq!(preferred_fast(&accept("gzip, deflate, br")), Encoding::Gzip);
        assert_eq!(preferred_fast(&accept("*")), Encoding::Gzip);
        assert_eq!(preferred_fast(&accept("br")), Encoding::Brotli);
        assert_eq!(preferred_fast(&accept("br, gzip;q=0.9")), Encoding::Brotli);
        assert_eq!(
            preferred_fast(&accept("br;q=0, gzip;q=0")),
            Encoding::Identity
        );
    }

    fn unbrotli(b: &[u8]) -> String {
        let mut out = String::new();
        brotli::Decompressor::new(b, 4096)
            .read_to_string(&mut out)
            .unwrap();
        out
    }

    fn ungzip(b: &[u8]) -> String {
        let mut out = String::new();
        flate2::read::GzDecoder::new(b)
            .read_to_string(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn every_form_decodes_to_the_same_bytes() {
        let text: String = (0..5000)
            .map(|i| format!("{{\"name\":\"indicator {i}\",\"kind\":\"optix\"}},"))
            .collect();
        let p = Precompressed::new("application/json", text.clone());
        let (raw, gz, br) = p.sizes();
        assert!(gz < raw / 4 && br < gz, "{raw} {gz} {br}");
        assert_eq!(ungzip(&p.gzip), text);
        assert_eq!(unbrotli(&p.br), text);
        let r = p.respond(&accept("br"));
        assert_eq!(r.headers()[header::CONTENT_ENCODING], "br");
        assert_eq!(r.headers()[header::VARY], "accept-encoding");
        assert!(
            p.respond(&HeaderMap::new())
                .headers()
                .get(header::CONTENT_ENCODING)
                .is_none()
        );
        for e in [Encoding::Gzip, Encoding::Brotli] {
            let made = fast(text.as_bytes(), e);
            assert!(made.len() < raw / 4, "{e:?}: {}", made.len());
            let back = match e {
                Encoding::Gzip => ungzip(&made),
                _ => unbrotli(&made),
            };
            assert_eq!(back, text, "{e:?}");
        }
    }

    fn answer(media: &str, bytes: usize, status: u16) -> Response {
        let mut r = (
            [(header::CONTENT_TYPE, media.to_string())],
            vec![b'x'; bytes],
        )
            .into_response();
        *r.status_mut() = axum::http::StatusCode::from_u16(status).unwrap();
        r
    }

    #[test]
    fn only_large_text_is_compressed_and_arrow_only_with_its_own_codec() {
        use Encoding::*;
        let zstd = Some(IpcCompression::Zstd);
        let big = MIN_BYTES;
        let small = MIN_BYTES - 1;
        for (media, size, status, encoding, ipc, want) in [
            ("application/json", big, 200, Gzip, None, Plan::Encode(Gzip)),
            (
                "application/json",
                big,
                200,
                Brotli,
                zstd,
                Plan::Encode(Brotli),
            ),
            (
                "text/csv; charset=utf-8",
                big,
                200,
                Gzip,
                None,
                Plan::Encode(Gzip),
            ),
            (
                "text/html; charset=utf-8",
                big,
                200,
                Brotli,
                None,
                Plan::Encode(Brotli),
            ),
            ("application/json", small, 200, Gzip, None, Plan::Varies),
            ("application/json", big, 200, Identity, None, Plan::Varies),
            ("application/json", big, 404, Gzip, None, Plan::Keep),
            ("application/json", big, 429, Gzip, None, Plan::Keep),
            (ARROW_STREAM, big, 200, Gzip, None, Plan::Keep),
            (
                ARROW_STREAM,
                big,
                200,
                Brotli,
                zstd,
                Plan::Arrow(IpcCompression::Zstd),
            ),
            (ARROW_STREAM, small, 200, Brotli, zstd, Plan::Keep),
            (
                "application/vnd.apache.parquet",
                big,
                200,
                Gzip,
                zstd,
                Plan::Keep,
            ),
            ("image/png", big, 200, Gzip, None, Plan::Keep),
        ] {
            let r = answer(media, size, status);
            assert_eq!(
                plan(&r, encoding, ipc),
                want,
                "{media} {size} {status} {encoding:?} {ipc:?}"
            );
        }
        let mut done = answer("application/json", big, 200);
        done.headers_mut()
            .insert(header::CONTENT_ENCODING, HeaderValue::from_static("br"));
        assert_eq!(plan(&done, Encoding::Gzip, None), Plan::Keep);
    }

    #[test]
    fn vary_names_accept_encoding_once() {
        let mut h = HeaderMap::new();
        h.append(header::VARY, HeaderValue::from_static("Accept"));
        vary(&mut h);
        vary(&mut h);
        let all: Vec<_> = h.get_all(header::VARY).iter().collect();
        assert_eq!(all, ["Accept", "accept-encoding"]);
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_fixed_answer_is_made_once_per_encoding() {
        static TEXT: &str = "{\"a\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}";
        static FIXED: Fixed = Fixed::new("application/json", TEXT.as_bytes());
        let plain = FIXED.respond(&HeaderMap::new()).await;
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        assert!(FIXED.gzip.get().is_none() && FIXED.br.get().is_none());
        let gz = FIXED.respond(&accept("gzip")).await;
        assert_eq!(gz.headers()[header::CONTENT_ENCODING], "gzip");
        let body = axum::body::to_bytes(gz.into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(ungzip(&body), TEXT);
        assert!(FIXED.gzip.get().is_some() && FIXED.br.get().is_none());
    }
}
