//! Work spread over the threads of the current pool in a given order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `each` of every item, on every thread of the current pool, each thread taking the next
/// item in order when it is free (results in the items' order). A parallel iterator would
/// halve the list between the threads, so the two largest files, both at its head, would
/// be read one after the other by one thread while the other read small ones.
pub(crate) fn in_order<T: Sync, R: Send>(items: &[T], each: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, R)>> = Mutex::new(Vec::with_capacity(items.len()));
    let drain = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { return };
            let r = each(item);
            done.lock().unwrap_or_else(|p| p.into_inner()).push((i, r));
        }
    };
    rayon::scope(|s| {
        for _ in 1..rayon::current_num_threads().min(items.len()) {
            s.spawn(|_| drain());
        }
        drain();
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// [`in_order`] of work that can fail, stopped at the first failure: once an item fails, the
/// flag (given to `each`, which may give up part-way once it is raised) is raised, no
/// further item is started, and that first failure is the result (a failure of an item that
/// gave up for the flag is dropped). Without one, every result in the items' order. A
/// package with one damaged file is refused without the others copied and read back first.
pub(crate) fn in_order_until_failure<T: Sync, R: Send, E: Send>(
    items: &[T],
    each: impl Fn(&T, &AtomicBool) -> Result<R, E> + Sync,
) -> Result<Vec<R>, E> {
    let stop = AtomicBool::new(false);
    let first: Mutex<Option<E>> = Mutex::new(None);
    let done = in_order(items, |item| {
        if stop.load(Ordering::Acquire) {
            return None;
        }
        match each(item, &stop) {
            Ok(r) => Some(r),
            Err(e) => {
                if !stop.swap(true, Ordering::AcqRel) {
                    *first.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                }
                None
            }
        }
    });
    if let Some(e) = first.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(done.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// After one item fails, at most the items already under way on the other threads run:
    /// the rest are never started, and the failure is the result.
    #[test]
    fn work_stops_at_the_first_failure() {
        let threads = 2;
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let items: Vec<usize> = (0..200).collect();
        let ran = AtomicUsize::new(0);
        let r = pool.install(|| {
            in_order_until_failure(&items, |&i, _| {
                ran.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(std::time::Duration::from_millis(2));
                if i == 3 { Err(i) } else { Ok(i) }
            })
        });
        assert_eq!(r, Err(3));
        let ran = ran.load(Ordering::SeqCst);
        assert!(ran <= 4 + threads, "{ran} items ran");
        let all = pool.install(|| in_order_until_failure(&items, |&i, _| Ok::<_, ()>(i * 2)));
        assert_eq!(all, Ok(items.iter().map(|i| i * 2).collect::<Vec<_>>()));
    }
}
