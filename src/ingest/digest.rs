//! The payload digest of a record, in the form `WARC-Payload-Digest`
//! writes it (`sha1:` and base32 of the SHA-1), as pywb's indexer and
//! warcio compute it for a record that carries none. One function for
//! ingest, which stores every document's digest in `documents`, and for
//! the export, which indexes records and writes revisits by it: two
//! spellings of one digest would make identical payloads look different.

use sha1::Digest;

/// The SHA-1 digest of `payload` as WARC-Payload-Digest spells it. The
/// payload of an HTTP record is the bytes after its header, as stored
/// (chunked and content-encoded bytes as they are); of any other record,
/// its block.
pub fn payload_digest(payload: &[u8]) -> String {
    format!("sha1:{}", base32(&sha1::Sha1::digest(payload)))
}

/// `payload_digest` of what a reader yields, for payloads read in pieces
/// (a record's member decompressed again by the export).
pub fn payload_digest_of(reader: &mut dyn std::io::Read) -> std::io::Result<String> {
    let mut hasher = sha1::Sha1::new();
    std::io::copy(reader, &mut hasher)?;
    Ok(format!("sha1:{}", base32(&hasher.finalize())))
}

/// RFC 4648 base32 (the alphabet WARC digests use), without padding.
fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut buffer, mut bits) = (0u32, 0u32);
    for &b in bytes {
        buffer = (buffer << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_spelled_as_warc_headers_spell_them() {
        // The empty payload's digest, as pywb knows it (EMPTY_DIGEST).
        assert_eq!(payload_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI");
        assert_eq!(base32(b"f"), "MY");
        let piecewise = payload_digest_of(&mut &b"<p>page</p>"[..]).unwrap();
        assert_eq!(piecewise, payload_digest(b"<p>page</p>"));
    }
}
