//! Every `CHECKSUMTYPE` of the METS vocabulary on a listed file, the file then corrupted: the
//! algorithms webaip computes catch it, the others leave the file "not checked" (never
//! "verified"), a type outside the vocabulary is a finding.

use std::path::Path;

use md5::Digest;

use super::{mutated, our_check};
use crate::util::{json, webaip};

/// The first `mets:file` of the representation METS: its text range and the file it locates.
fn first_file(mets: &str) -> (usize, usize, String) {
    let start = mets.find("<mets:file ").unwrap();
    let end = start + mets[start..].find("</mets:file>").unwrap();
    let at = start + mets[start..end].find("xlink:href=\"").unwrap() + 12;
    let href = mets[at..at + mets[at..].find('"').unwrap()].to_string();
    (start, end, href)
}

/// The file's digest by the METS algorithm `name` (hex), when the test computes it.
fn digest(name: &str, b: &[u8]) -> String {
    let hex = |d: &[u8]| data_encoding::HEXLOWER.encode(d);
    match name {
        "Adler-32" => format!("{:08x}", adler2::adler32_slice(b)),
        "CRC32" => format!("{:08x}", crc32fast::hash(b)),
        "MD5" => hex(&md5::Md5::digest(b)),
        "SHA-1" => hex(&sha1::Sha1::digest(b)),
        "SHA-256" => hex(&sha2::Sha256::digest(b)),
        "SHA-384" => hex(&sha2::Sha384::digest(b)),
        "SHA-512" => hex(&sha2::Sha512::digest(b)),
        "TIGER" => hex(&tiger::Tiger::digest(b)),
        "WHIRLPOOL" => hex(&whirlpool::Whirlpool::digest(b)),
        // Not computed by webaip: any value.
        _ => "00112233445566778899aabbccddeeff".into(),
    }
}

/// Sets the first file's CHECKSUMTYPE to `name` (CHECKSUM its digest) and returns its path.
fn restate(ip: &Path, name: &str) -> std::path::PathBuf {
    let rep = ip.join("representations/warc");
    let p = rep.join("METS.xml");
    let s = std::fs::read_to_string(&p).unwrap();
    let (start, end, href) = first_file(&s);
    let file = rep.join(&href);
    let sum = digest(name, &std::fs::read(&file).unwrap());
    let el = set_attr(&s[start..end], "CHECKSUM", &sum);
    let el = set_attr(&el, "CHECKSUMTYPE", name);
    std::fs::write(&p, format!("{}{el}{}", &s[..start], &s[end..])).unwrap();
    refresh_root(ip);
    file
}

/// The root METS's SIZE and CHECKSUM of the representation METS, after it changed.
fn refresh_root(ip: &Path) {
    let rep = std::fs::read(ip.join("representations/warc/METS.xml")).unwrap();
    let p = ip.join("METS.xml");
    let s = std::fs::read_to_string(&p).unwrap();
    let href = s.find("xlink:href=\"representations/warc/METS.xml\"").unwrap();
    let start = s[..href].rfind("<mets:file ").unwrap();
    let el = set_attr(&s[start..href], "SIZE", &rep.len().to_string());
    let el = set_attr(&el, "CHECKSUM", &digest("SHA-256", &rep));
    std::fs::write(&p, format!("{}{el}{}", &s[..start], &s[href..])).unwrap();
}

/// `el` with attribute `attr` set to `value`.
fn set_attr(el: &str, attr: &str, value: &str) -> String {
    let at = el.find(&format!(" {attr}=\"")).unwrap() + attr.len() + 3;
    let end = at + el[at..].find('"').unwrap();
    format!("{}{value}{}", &el[..at], &el[end..])
}

/// Flips the last byte (same size, other bytes).
fn corrupt(file: &Path) {
    let mut b = std::fs::read(file).unwrap();
    let last = b.len() - 1;
    b[last] ^= 0xff;
    std::fs::write(file, b).unwrap();
}

fn verdict(ip: &Path) -> serde_json::Value {
    let o = webaip(&["validate", "--profile", "eark-csip", "--json", ip.to_str().unwrap()]);
    crate::util::only_report(&json(&o))
}

#[test]
fn every_checksum_type_is_compared_or_said_not_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let ip = mutated(tmp.path(), "sums", |_| {});
    let all = verdict(&ip)["files_verified"].as_u64().unwrap();
    assert!(all > 1, "{all}");
    let computed = [
        "Adler-32",
        "CRC32",
        "MD5",
        "SHA-1",
        "SHA-256",
        "SHA-384",
        "SHA-512",
        "TIGER",
        "WHIRLPOOL",
    ];
    for name in computed {
        let file = restate(&ip, name);
        let v = verdict(&ip);
        let got = (v["valid"].as_bool(), v["files_verified"].as_u64());
        assert_eq!(got, (Some(true), Some(all)), "{name}: {v}");
        corrupt(&file);
        assert_eq!(our_check(&ip), (1, vec!["CSIP71".to_string()]), "{name}");
        let v = verdict(&ip);
        assert_eq!(v["files_verified"].as_u64(), Some(all - 1), "{name}");
        corrupt(&file); // back as it was
    }
    for name in ["HAVAL", "MNP"] {
        let file = restate(&ip, name);
        corrupt(&file);
        let v = verdict(&ip);
        assert_eq!(v["valid"].as_bool(), Some(true), "{name}: no rule is broken");
        assert_eq!(v["files_verified"].as_u64(), Some(all - 1), "{name}: not verified");
        let n = &v["files_not_checked"];
        assert_eq!(n.as_array().map(Vec::len), Some(1), "{name}: {v}");
        assert_eq!(n[0]["checksum_type"].as_str(), Some(name));
        let o = webaip(&["validate", "--profile", "eark-csip", ip.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(&format!("checksum not checked (webaip does not compute {name})")));
        assert!(text.contains("1 file(s) whose checksum was not checked"), "{text}");
        corrupt(&file);
    }
    // Outside the vocabulary: a finding, the file not verified, however good its bytes.
    for name in ["sha-256", "NONE"] {
        let file = restate(&ip, name);
        corrupt(&file);
        assert_eq!(our_check(&ip), (1, vec!["CSIP72".to_string()]), "{name}");
        assert_eq!(verdict(&ip)["files_verified"].as_u64(), Some(all - 1), "{name}");
        corrupt(&file);
    }
}
