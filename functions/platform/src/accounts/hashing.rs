//! Argon2id password hashes: made with a random salt, and checked into
//! memory the caller keeps, so a flood of logins reuses buffers instead of
//! taking 19 MiB from the allocator for each.

use crate::PortError;
use argon2::password_hash::{Output, PasswordHash, PasswordHasher, SaltString, rand_core::OsRng};
use argon2::{Algorithm, Argon2, Block, Params, Version};

/// Hashes a password as an argon2id PHC string with a random salt.
pub fn hash_password(password: &str) -> Result<String, PortError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(PortError::internal)
}

/// argon2 verification of a PHC string into caller-owned memory (grown to the
/// hash's memory cost once, then reused); the comparison is constant-time.
pub(super) fn verify_with(phc: &str, password: &[u8], blocks: &mut Vec<Block>) -> bool {
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return false;
    };
    let Ok(algorithm) = Algorithm::try_from(parsed.algorithm) else {
        return false;
    };
    let version = match parsed.version.map(Version::try_from).transpose() {
        Ok(v) => v.unwrap_or_default(),
        Err(_) => return false,
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    let mut salt_bytes = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_bytes) else {
        return false;
    };
    if blocks.len() < params.block_count() {
        blocks.resize(params.block_count(), Block::default());
    }
    let mut out = vec![0u8; expected.len()];
    let argon = Argon2::new(algorithm, version, params.clone());
    if argon
        .hash_password_into_with_memory(
            password,
            salt,
            &mut out,
            &mut blocks[..params.block_count()],
        )
        .is_err()
    {
        return false;
    }
    Output::new(&out).is_ok_and(|computed| computed == expected)
}

/// The hash an unknown account's password is checked against, so that an
/// unknown e-mail takes as long as a wrong password. Made on first need, not
/// at start (a function's cold start does not pay for an Argon2 hash), and
/// once: a flood of unknown e-mails waits for the one hash rather than each
/// making one outside the hashing permits.
pub(super) async fn dummy_hash() -> Result<String, PortError> {
    static DUMMY: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    DUMMY
        .get_or_try_init(|| async {
            tokio::task::spawn_blocking(|| hash_password("not a real password"))
                .await
                .map_err(PortError::internal)?
        })
        .await
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::PasswordVerifier;

    #[test]
    fn pooled_verification_agrees_with_the_argon2_crate() {
        let phc = hash_password("secret words").unwrap();
        let mut blocks = Vec::new();
        assert!(verify_with(&phc, b"secret words", &mut blocks));
        assert!(!verify_with(&phc, b"secret word", &mut blocks));
        assert!(!verify_with("not a phc string", b"x", &mut blocks));
        let parsed = PasswordHash::new(&phc).unwrap();
        assert!(
            Argon2::default()
                .verify_password(b"secret words", &parsed)
                .is_ok()
        );
        assert_eq!(
            blocks.len(),
            Params::default().block_count(),
            "buffer reused"
        );
    }
}
