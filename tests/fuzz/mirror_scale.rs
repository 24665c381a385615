//! Mirror packaging against the page count (issue 24, items 7 and 10): a PANDAS instance of
//! 5,000 tiny pages, every one rewritten, is packaged in a bounded peak RSS (it took 58 MB,
//! 63 MB in the runs, then 45 MB; now 28 MB, and 62 MB at 20,000 pages where it took
//! 132 MB); and the mirror's file list, kept on disk, does not grow with the files: listing a
//! mirror of 40,000 files takes what listing one of 10,000 does. Time per page, and packaging
//! up to 80,000 pages, are bench/run-mirror-scale.sh's.

/// Pages of the instance.
const PAGES: usize = 5_000;
/// The bound: under the 45 MB the run took while the METS check kept every ID, reference,
/// PREMIS object and event as strings in maps (now interned, `mets::validate::names`), and
/// the link map lived on through it (36 MB), plus the compiled DROID signature file PRONOM
/// identification (on by default) keeps from the first batch on: a fixed 12 to 15 MB, the same
/// at 1,000 pages as at 5,000 (31 MB with `--identify none`, 43 MB without, 2026-11-27).
/// Measured since at 46.6 to 47.7 MiB, and after the code was restructured around its facade
/// at 47.5 to 48.7 MiB (about 1 MiB more with identification on, the same without it). With
/// the container signature file compiled beside the binary one and a payload kept whole when
/// a signature needs it (at most 16 MiB in memory, per payload identified at once): 50 MiB at
/// 5,000 pages (2026-11-29). The bound keeps 4 MiB above that, far below the 132 MB a held
/// link map took.
const PEAK_RSS_LIMIT: u64 = 54 << 20;

/// The instance bench/gen_pandas_tiny.py makes: `d{K}/p{I}.html`, three links each.
fn tiny_instance(root: &std::path::Path, pages: usize) -> std::path::PathBuf {
    let instance = root.join("999/20240101-1200");
    let host = instance.join("www.e.org");
    for i in 0..pages {
        let dir = host.join(format!("d{}", i / 1000));
        if i % 1000 == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let links: String = (0..3)
            .map(|k| (i * 7 + k * 13 + 1) % pages)
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
    let instance = tiny_instance(tmp.path(), PAGES);
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

/// What listing 30,000 more files may add: SQLite's bounded page cache filling (4 MiB), with
/// its allocator's slack (measured 4.9 to 5.5 MiB). Held in memory, the list and its link map
/// took about 330 bytes a file (9.7 MB more at 40,000 files than at 10,000).
const LIST_GROWTH_LIMIT: u64 = 6 << 20;
/// What 40,000 files more may add once that cache is full: next to nothing beside the
/// allocator's slack (measured 0.8 and 1.2 MiB on two runs of the same build). Held in memory,
/// the list would add 13 MB; 2 MiB still fails anything above 52 bytes a file.
const LIST_FULL_CACHE_LIMIT: u64 = 2 << 20;

#[test]
fn listing_a_mirror_of_40000_files_takes_what_one_of_10000_does() {
    let tmp = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for pages in [10_000, 40_000, 80_000] {
        let instance = tiny_instance(&tmp.path().join(pages.to_string()), pages);
        let argv =
            [crate::util::WEBAIP.to_string(), "pages".into(), instance.display().to_string()];
        let stderr = tmp.path().join("stderr");
        let run =
            super::child::launch(&argv, &[], None, std::time::Duration::from_secs(300), &stderr);
        assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
        eprintln!("pages of a mirror of {pages} files: peak RSS {} KB", run.peak_rss >> 10);
        peaks.push(run.peak_rss);
        match pages {
            10_000 => a_title_of_four_instances_lists_in_what_one_takes(&instance, run.peak_rss),
            40_000 => list_on_a_full_disk_fails_and_says_so(tmp.path(), &instance),
            _ => {}
        }
        std::fs::remove_dir_all(tmp.path().join(pages.to_string())).unwrap();
    }
    let growth = peaks[1].saturating_sub(peaks[0]);
    assert!(growth < LIST_GROWTH_LIMIT, "{} KB more for 30,000 more files", growth >> 10);
    // Bounded, not merely slow to grow: the next 40,000 files add next to nothing.
    let more = peaks[2].saturating_sub(peaks[1]);
    assert!(more < LIST_FULL_CACHE_LIMIT, "{} KB more for 40,000 more files", more >> 10);
}

/// The list outgrows its page cache at 40,000 files: on a TMPDIR of 256 KiB it cannot be
/// kept, and the run says so and exits 2, not listing part of the mirror.
fn list_on_a_full_disk_fails_and_says_so(tmp: &std::path::Path, instance: &std::path::Path) {
    let dir = tmp.join("small-tmp");
    std::fs::create_dir(&dir).unwrap();
    let Some(_disk) = crate::util::SmallDisk::mount(&dir, 256) else {
        eprintln!("no tmpfs (not root): the full-disk case is not tried");
        return;
    };
    let o = crate::util::webaip_command()
        .arg("pages")
        .arg(instance)
        .env("TMPDIR", &dir)
        .env("SQLITE_TMPDIR", &dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("the mirror's file list (a temporary database in TMPDIR"), "{err}");
    assert!(err.contains("full"), "{err}");
    assert!(o.stdout.is_empty(), "nothing listed: {}", String::from_utf8_lossy(&o.stdout));
}

/// A PANDAS title is listed one instance at a time: four instances of 10,000 files take what
/// one does (read all before listing, each kept its list's page cache and file: 64 MB for
/// twelve instances of 20,000 files, now 25 MB).
fn a_title_of_four_instances_lists_in_what_one_takes(instance: &std::path::Path, one: u64) {
    let title = instance.parent().unwrap();
    for day in ["20240102-1200", "20240103-1200", "20240104-1200"] {
        for e in walkdir::WalkDir::new(instance) {
            let e = e.unwrap();
            let to = title.join(day).join(e.path().strip_prefix(instance).unwrap());
            if e.file_type().is_dir() {
                std::fs::create_dir_all(&to).unwrap();
            } else {
                std::fs::hard_link(e.path(), &to).unwrap();
            }
        }
    }
    let argv = [crate::util::WEBAIP.to_string(), "pages".into(), title.display().to_string()];
    let stderr = title.join("stderr");
    let run = super::child::launch(&argv, &[], None, std::time::Duration::from_secs(300), &stderr);
    assert!(run.status.success(), "{:?}: {}", run.status, run.stderr);
    eprintln!("pages of a title of 4 x 10,000 files: peak RSS {} KB", run.peak_rss >> 10);
    assert!(
        run.peak_rss < one + LIST_GROWTH_LIMIT,
        "{} KB for four instances, {} KB for one",
        run.peak_rss >> 10,
        one >> 10
    );
}
