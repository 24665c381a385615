//! A PANDAS instance whose side files claim gigabytes is read at once, within bounds.

use std::time::{Duration, Instant};

use super::{UrlSource, Zone, read_instance};

#[test]
fn side_files_are_read_with_bounds() {
    // A 5 GB sparse new.txt and url.map (no disk used) and a new.zip whose first entry claims
    // 4 GB of body: the instance is read at once, the big side files refused by their size,
    // the cache index skipped past without holding its body.
    let area = tempfile::tempdir().unwrap();
    let inst = area.path().join("input/1/20200101-0000");
    std::fs::create_dir_all(inst.join("hts-cache")).unwrap();
    std::fs::create_dir_all(inst.join("www.e.org")).unwrap();
    std::fs::write(inst.join("www.e.org/index.html"), b"<p>hi</p>").unwrap();
    for name in ["hts-cache/new.txt", "url.map"] {
        let f = std::fs::File::create(inst.join(name)).unwrap();
        f.set_len(5 << 30).unwrap();
    }
    let mut zip = Vec::new();
    zip.extend_from_slice(&[0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    zip.extend_from_slice(&u32::MAX.to_le_bytes()); // compressed size
    zip.extend_from_slice(&u32::MAX.to_le_bytes());
    let name = b"www.e.org/index.html";
    let extra = b"X-Save: www.e.org/index.html\r\nContent-Type: text/html\r\n";
    zip.extend_from_slice(&(name.len() as u16).to_le_bytes());
    zip.extend_from_slice(&(extra.len() as u16).to_le_bytes());
    zip.extend_from_slice(name);
    zip.extend_from_slice(extra);
    std::fs::write(inst.join("hts-cache/new.zip"), &zip).unwrap();

    let started = Instant::now();
    let i = read_instance(&inst, Zone::Utc).unwrap();
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    for name in ["hts-cache/new.txt", "url.map"] {
        assert!(
            i.refused.listed().iter().any(|(p, w)| p == name && w.contains("larger than")),
            "{name}: {:?}",
            i.refused
        );
    }
    assert_eq!(i.files.len(), 1);
    let f = i.root_page().unwrap().unwrap();
    assert_eq!(f.url_source, UrlSource::Cache);
    assert_eq!(f.url, "http://www.e.org/index.html");
}
