//! Mirror packaging against the page count (issue 24, item 7): a PANDAS instance of 5,000
//! tiny pages, every one rewritten, is packaged in a bounded peak RSS (it took 58 MB, 63 MB
//! in the runs, then 45 MB; now 28 MB, and 62 MB at 20,000 pages where it took 132 MB).
//! Time per page is bench/run-mirror-scale.sh's.

/// Pages of the instance.
const PAGES: usize = 5_000;
/// The bound: under the 45 MB the run took while the METS check kept every ID, reference,
/// PREMIS object and event as strings in maps (now interned, `mets::validate::names`), and
/// the link map lived on through it.
const PEAK_RSS_LIMIT: u64 = 36 << 20;

/// The instance bench/gen_pandas_tiny.py makes: `d{K}/p{I}.html`, three links each.
fn tiny_instance(root: &std::path::Path) -> std::path::PathBuf {
    let instance = root.join("999/20240101-1200");
    let host = instance.join("www.e.org");
    for i in 0..PAGES {
        let dir = host.join(format!("d{}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let links: String = (0..3)
            .map(|k| (i * 7 + k * 13 + 1) % PAGES)
            .map(|j| format!("<a href=\"../d{}/p{j}.html\">{j}</a>", j / 1000))
            .collect();
        let page =
            format!("<html><head><title>Page {i}</title></head><body>{links}</body></html>\n");
        std::fs::write(dir.join(format!("p{i}.html")), page).unwrap();
    }
    instance
}

#[test]
fn packaging_thousands_of_rewritten_pages_stays_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let instance = tiny_instance(tmp.path());
    let out = tmp.path().join("pkg");
    let args = crate::util::Package::new().quiet().argv(&out, &[&instance]);
    let run = super::child::launch_webaip(&args, tmp.path());
    assert!(run.status.success(), "package failed: {:?} {}", run.status, run.stderr);
    assert!(run.peak_rss < PEAK_RSS_LIMIT, "peak RSS {} MB for {PAGES} pages", run.peak_rss >> 20);
    // Every page was rewritten (its original kept), and no temporary is left in the package.
    let files: Vec<String> = walkdir::WalkDir::new(&out)
        .into_iter()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(files.iter().all(|f| !f.starts_with(".rewrite-")), "{files:?}");
    let mets = std::fs::read_to_string(out.join("METS.xml")).unwrap();
    assert_eq!(mets.matches("transformation: HTML/CSS link rewriting").count(), PAGES);
}
