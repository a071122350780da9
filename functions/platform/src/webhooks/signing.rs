//! Standard Webhooks signatures, and the endpoint secrets they use.
//!
//! An endpoint's secret is derived from one operator key (HMAC of the
//! endpoint id and secret version), so no store holds a secret: a copy of
//! the database signs nothing, and rotating is a version number.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// Bytes of a derived endpoint secret (Standard Webhooks: 24 to 64).
const SECRET_BYTES: usize = 32;

/// The operator key endpoint secrets are derived from.
#[derive(Clone)]
pub struct Keyring {
    master: [u8; 32],
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keyring(..)")
    }
}

impl Keyring {
    pub fn new(master: [u8; 32]) -> Self {
        Keyring { master }
    }

    /// A fresh random key.
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut master = [0u8; 32];
        getrandom::fill(&mut master)?;
        Ok(Keyring { master })
    }

    /// The key as written to a file or an environment variable (base64).
    pub fn encode(&self) -> String {
        STANDARD.encode(self.master)
    }

    pub fn decode(text: &str) -> Result<Self, String> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|e| format!("webhook key is not base64: {e}"))?;
        let master: [u8; 32] = bytes
            .try_into()
            .map_err(|_| "webhook key must be 32 bytes".to_string())?;
        Ok(Keyring { master })
    }

    /// A 32-byte key for another `purpose` (API key hashes), independent of
    /// every endpoint secret.
    pub fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac = HmacSha256::new_from_slice(&self.master).expect("any key length");
        mac.update(format!("marketlab derived key:{purpose}").as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// The signing key of `endpoint` at `version`.
    pub fn secret(&self, endpoint: &str, version: u32) -> Vec<u8> {
        let mut mac = HmacSha256::new_from_slice(&self.master).expect("any key length");
        mac.update(format!("marketlab webhook secret:{endpoint}:{version}").as_bytes());
        mac.finalize().into_bytes()[..SECRET_BYTES].to_vec()
    }

    /// A key from operator text: base64 of 32 bytes as [`Keyring::encode`]
    /// writes it, or any text of at least 32 characters (a generated
    /// secret), hashed to 32 bytes.
    pub fn from_text(text: &str) -> Result<Self, String> {
        use sha2::Digest;
        if let Ok(k) = Keyring::decode(text) {
            return Ok(k);
        }
        let text = text.trim();
        if text.chars().count() < 32 {
            return Err("webhook key must be base64 of 32 bytes or at least 32 characters".into());
        }
        Ok(Keyring {
            master: sha2::Sha256::digest(text.as_bytes()).into(),
        })
    }

    /// The secret as shown to its account: `whsec_` and base64.
    pub fn whsec(&self, endpoint: &str, version: u32) -> String {
        format!("whsec_{}", STANDARD.encode(self.secret(endpoint, version)))
    }
}

/// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
pub fn sign(secret: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = HmacSha256::new_from_slice(secret).expect("any key length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// The `webhook-signature` value: one signature per secret, space-separated
/// (during a rotation the new and the previous secret both sign).
pub fn signature_header(secrets: &[Vec<u8>], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|s| sign(s, id, timestamp, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of the Standard Webhooks specification's test
    /// vectors (the reference libraries' shared fixture).
    #[test]
    fn the_specifications_example() {
        let secret = STANDARD.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let sig = sign(
            &secret,
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn secrets_differ_by_endpoint_version_and_key() {
        let k = Keyring::new([7; 32]);
        assert_ne!(k.secret("ep_a", 1), k.secret("ep_a", 2));
        assert_ne!(k.secret("ep_a", 1), k.secret("ep_b", 1));
        assert_ne!(k.secret("ep_a", 1), Keyring::new([8; 32]).secret("ep_a", 1));
        assert_eq!(k.secret("ep_a", 1).len(), 32);
        assert!(k.whsec("ep_a", 1).starts_with("whsec_"));
        let back = Keyring::decode(&k.encode()).unwrap();
        assert_eq!(back.secret("ep_a", 3), k.secret("ep_a", 3));
        assert!(Keyring::decode("c2hvcnQ=").is_err());
        assert_eq!(
            Keyring::from_text(&k.encode()).unwrap().secret("e", 1),
            k.secret("e", 1)
        );
        let generated = "q".repeat(64);
        assert_eq!(
            Keyring::from_text(&generated).unwrap().secret("e", 1),
            Keyring::from_text(&generated).unwrap().secret("e", 1)
        );
        assert!(Keyring::from_text("too short").is_err());
    }
}
