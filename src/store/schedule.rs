//! Work spread over the threads of the current pool in a given order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

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
