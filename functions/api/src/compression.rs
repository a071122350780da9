//! Compressed answers. Every answer goes through tower-http's compression
//! layer (gzip or brotli, as the client's `Accept-Encoding` prefers; brotli
//! at quality 4, as on-the-fly servers use). The large answers that are the
//! same for every caller until the data changes (the indicator list, the
//! catalogs) are compressed once, at higher levels, and served from memory:
//! the layer leaves an answer that already has a `Content-Encoding` alone.

use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use std::io::Write;
use tower_http::compression::CompressionLayer;

/// The layer every router gets.
pub fn layer() -> CompressionLayer {
    CompressionLayer::new().gzip(true).br(true)
}

/// An encoding a client accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Identity,
    Gzip,
    Brotli,
}

/// Brotli quality and window for answers compressed once: 9 is within a few
/// percent of the maximum (11) at a tenth of its time.
const BROTLI_QUALITY: u32 = 9;
const BROTLI_WINDOW: u32 = 22;

/// The encoding to answer with: the one of gzip and br with the higher `q`
/// (br on a tie), identity when neither is accepted. `*` stands for both.
pub fn preferred(headers: &HeaderMap) -> Encoding {
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
    if br > 0.0 && br >= gzip {
        Encoding::Brotli
    } else if gzip > 0.0 {
        Encoding::Gzip
    } else {
        Encoding::Identity
    }
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
        let mut gz = flate2::write::GzEncoder::new(
            Vec::with_capacity(identity.len() / 6),
            flate2::Compression::best(),
        );
        gz.write_all(&identity).expect("writing to memory");
        let gzip = gz.finish().expect("writing to memory").into();
        let mut br = Vec::with_capacity(identity.len() / 8);
        {
            let mut w =
                brotli::CompressorWriter::new(&mut br, 64 * 1024, BROTLI_QUALITY, BROTLI_WINDOW);
            w.write_all(&identity).expect("writing to memory");
        }
        Precompressed {
            content_type,
            identity,
            gzip,
            br: br.into(),
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
        let (body, encoding) = match preferred(request) {
            Encoding::Brotli => (self.br.clone(), Some("br")),
            Encoding::Gzip => (self.gzip.clone(), Some("gzip")),
            Encoding::Identity => (self.identity.clone(), None),
        };
        let mut response = ([(header::CONTENT_TYPE, self.content_type)], body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if let Some(e) = encoding {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(e));
        }
        response
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
    }

    #[test]
    fn every_form_decodes_to_the_same_bytes() {
        let text: String = (0..5000)
            .map(|i| format!("{{\"name\":\"indicator {i}\",\"kind\":\"optix\"}},"))
            .collect();
        let p = Precompressed::new("application/json", text.clone());
        let (raw, gz, br) = p.sizes();
        assert!(gz < raw / 4 && br < gz, "{raw} {gz} {br}");
        let mut out = String::new();
        flate2::read::GzDecoder::new(&p.gzip[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
        let mut out = String::new();
        brotli::Decompressor::new(&p.br[..], 4096)
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
        let r = p.respond(&accept("br"));
        assert_eq!(r.headers()[header::CONTENT_ENCODING], "br");
        assert_eq!(r.headers()[header::VARY], "accept-encoding");
        assert!(
            p.respond(&HeaderMap::new())
                .headers()
                .get(header::CONTENT_ENCODING)
                .is_none()
        );
    }
}
