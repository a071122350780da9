//! A reader that stops a file at its size limit and a line at its length
//! limit, so a parser's memory is bounded by a line, whatever the file.

use std::io::{self, Read};

/// The longest line a bars file may have: a row of six numbers and a date
/// takes under a hundred bytes.
pub const MAX_LINE: usize = 64 * 1024;

pub struct Bounded<R> {
    inner: R,
    left: u64,
    line: usize,
}

impl<R: Read> Bounded<R> {
    pub fn new(inner: R, limit: u64) -> Self {
        Bounded {
            inner,
            left: limit,
            line: 0,
        }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            // One byte more tells a file that grew past the limit apart
            // from one that ends there.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(io::Error::other(
                    "the file grew past the inbox's size limit",
                )),
            };
        }
        let cap = buf.len().min(self.left.min(usize::MAX as u64) as usize);
        let n = self.inner.read(&mut buf[..cap])?;
        self.left -= n as u64;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.line = 0;
            } else {
                self.line += 1;
                if self.line > MAX_LINE {
                    return Err(io::Error::other(format!(
                        "a line longer than {MAX_LINE} bytes"
                    )));
                }
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_or_a_file_past_the_limit_fails() {
        let mut out = Vec::new();
        let long = vec![b'x'; MAX_LINE + 1];
        let e = Bounded::new(&long[..], 1 << 20)
            .read_to_end(&mut out)
            .unwrap_err();
        assert!(e.to_string().contains("longer than"), "{e}");
        let e = Bounded::new(&b"a\nb\nc\n"[..], 4)
            .read_to_end(&mut out)
            .unwrap_err();
        assert!(e.to_string().contains("grew past"), "{e}");
        out.clear();
        Bounded::new(&b"a\nb\n"[..], 4)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"a\nb\n");
    }
}
