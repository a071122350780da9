//! Key text: made from system randomness, parsed, and hashed with the
//! deployment's pepper. A fast keyed hash suits 256-bit random secrets (no
//! guessing to slow down, unlike passwords); the pepper means a copy of the
//! key table alone cannot even confirm a leaked key.

use super::Mode;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

const MARK: &str = "mlk_";
const ID_LEN: usize = 12;
const SECRET_BYTES: usize = 32;
/// 32 bytes in unpadded base64.
const SECRET_LEN: usize = 43;

/// The deployment secret key hashes are made with, held as the HMAC state
/// already keyed with it: a check hashes only the key it is given.
#[derive(Clone)]
pub struct Pepper(HmacSha256);

impl std::fmt::Debug for Pepper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pepper(..)")
    }
}

impl Pepper {
    pub fn new(bytes: [u8; 32]) -> Self {
        Pepper(HmacSha256::new_from_slice(&bytes).expect("any key length"))
    }

    /// From operator text, as the webhook key is read (base64 of 32 bytes,
    /// or at least 32 characters).
    pub fn from_text(text: &str) -> Result<Self, String> {
        crate::webhooks::signing::Keyring::from_text(text)
            .map(|k| Pepper::new(k.derive("api keys")))
            .map_err(|e| e.replace("webhook key", "API key pepper"))
    }

    /// Hex HMAC-SHA256 of a key's id and secret.
    pub fn hash(&self, id: &str, secret: &str) -> String {
        let bytes = self.mac(id, secret).finalize().into_bytes();
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Whether `secret` is the one `hash` was made from, in constant time.
    pub fn matches(&self, id: &str, secret: &str, hash: &str) -> bool {
        digest(hash).is_some_and(|expected| self.matches_digest(id, secret, &expected))
    }

    /// [`Self::matches`] against a hash already read from its hex ([`digest`]).
    pub fn matches_digest(&self, id: &str, secret: &str, expected: &[u8; 32]) -> bool {
        self.mac(id, secret).verify_slice(expected).is_ok()
    }

    fn mac(&self, id: &str, secret: &str) -> HmacSha256 {
        let mut mac = self.0.clone();
        mac.update(id.as_bytes());
        mac.update(b":");
        mac.update(secret.as_bytes());
        mac
    }
}

/// A stored hash's 32 bytes, from its hex.
pub fn digest(hash: &str) -> Option<[u8; 32]> {
    unhex(hash)?.try_into().ok()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// `mlk_<mode>_<id>`.
pub(super) fn prefix(mode: Mode, id: &str) -> String {
    format!("{MARK}{}_{id}", mode.name())
}

/// A key as a client sends it, split into its parts.
#[derive(PartialEq)]
pub struct Token<'a> {
    pub mode: Mode,
    pub id: &'a str,
    pub secret: &'a str,
}

impl std::fmt::Debug for Token<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token({})", prefix(self.mode, self.id))
    }
}

impl<'a> Token<'a> {
    /// The parts of `text`, if it has the shape of a key.
    pub fn parse(text: &'a str) -> Option<Token<'a>> {
        let rest = text.strip_prefix(MARK)?;
        let (mode, rest) = rest.split_once('_')?;
        let mode = Mode::parse(mode)?;
        let id = rest.get(..ID_LEN)?;
        let secret = rest.get(ID_LEN..)?.strip_prefix('_')?;
        let shaped = id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            && secret.len() == SECRET_LEN
            && secret
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        shaped.then_some(Token { mode, id, secret })
    }
}

/// A new key: the text shown once, its id and the hash that is stored.
pub struct Issued {
    pub key: String,
    pub id: String,
    pub hash: String,
}

/// Makes a key of `mode` from system randomness.
pub fn issue(mode: Mode, pepper: &Pepper) -> Result<Issued, getrandom::Error> {
    let mut id = [0u8; ID_LEN / 2];
    let mut secret = [0u8; SECRET_BYTES];
    getrandom::fill(&mut id)?;
    getrandom::fill(&mut secret)?;
    let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let secret = URL_SAFE_NO_PAD.encode(secret);
    Ok(Issued {
        key: format!("{}_{secret}", prefix(mode, &id)),
        hash: pepper.hash(&id, &secret),
        id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_issued_key_parses_back_and_matches_only_its_hash() {
        let pepper = Pepper::new([7; 32]);
        let issued = issue(Mode::Test, &pepper).unwrap();
        let token = Token::parse(&issued.key).expect("the shape of a key");
        assert_eq!(token.mode, Mode::Test);
        assert_eq!(token.id, issued.id);
        assert!(pepper.matches(token.id, token.secret, &issued.hash));
        assert!(!Pepper::new([8; 32]).matches(token.id, token.secret, &issued.hash));
        let other = issue(Mode::Test, &pepper).unwrap();
        assert!(!pepper.matches(token.id, token.secret, &other.hash));
        assert!(
            !format!("{token:?}").contains(token.secret),
            "Debug hides the secret"
        );
    }

    #[test]
    fn the_hash_is_hmac_sha256_of_id_and_secret() {
        // Python: hmac.new(b"\x0b" * 32, b"abc:def", hashlib.sha256).hexdigest()
        assert_eq!(
            Pepper::new([0x0b; 32]).hash("abc", "def"),
            "4693ae7c949019f1142d8ae3d30da24859c053120bb5b21629630ea558e3c2d8"
        );
    }

    #[test]
    fn text_that_is_not_a_key_is_not_parsed() {
        let pepper = Pepper::new([1; 32]);
        let key = issue(Mode::Live, &pepper).unwrap().key;
        assert!(Token::parse(&key).is_some());
        for bad in [
            "",
            "mlk_live_",
            &key[..key.len() - 1],
            &format!("{key}x"),
            &key.replace("mlk_live", "mlk_prod"),
            &key.replace("mlk_", "sk_"),
            "mlk_live_ABCDEF012345_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        ] {
            assert!(Token::parse(bad).is_none(), "{bad}");
        }
    }
}
