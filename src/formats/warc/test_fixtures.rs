//! Containers built for unit tests of the readers that guess gzip member boundaries (the
//! index's and the WACZ export's split reading).

use super::writer::WarcWriter;

/// Writes record number `n` with the given payload into a container being built.
pub(crate) type WriteRecord<'a> = &'a dyn Fn(&mut WarcWriter<Vec<u8>>, usize, &[u8]);

/// Two gzip containers of the same 400 records (`record(n, body(n))`): `plain`, and `trapped`,
/// which after record 199 also holds a record stored uncompressed whose payload hides, past
/// the file's middle, the gzip member of a fake record (`fake`). A reader guessing member
/// boundaries in the middle of `trapped` lands on the fake; a walk from the start never does.
pub(crate) struct TrappedContainers {
    pub(crate) plain: Vec<u8>,
    pub(crate) trapped: Vec<u8>,
    pub(crate) fake: Vec<u8>,
}

pub(crate) fn trapped_containers(
    record: WriteRecord<'_>,
    body: &dyn Fn(usize) -> Vec<u8>,
) -> TrappedContainers {
    let mut fake = WarcWriter::new(Vec::new(), 6);
    record(&mut fake, 999_999, b"<title>Not of this file</title>");
    let fake = fake.finish().unwrap();
    let mut trap = WarcWriter::new(Vec::new(), 0);
    let payload = [&vec![b'x'; 300_000][..], &fake, &vec![b'y'; 50_000]].concat();
    record(&mut trap, 500, &payload);
    let trap = trap.finish().unwrap();
    let (mut plain, mut trapped) = (WarcWriter::new(Vec::new(), 6), WarcWriter::new(Vec::new(), 6));
    for n in 0..400 {
        record(&mut plain, n, &body(n));
        record(&mut trapped, n, &body(n));
        if n == 199 {
            trapped.append_member(&trap[..], trap.len() as u64).unwrap();
        }
    }
    TrappedContainers { plain: plain.finish().unwrap(), trapped: trapped.finish().unwrap(), fake }
}
