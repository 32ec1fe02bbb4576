//! A global allocator that counts, so the benchmark can report the bytes
//! allocated and the peak heap of one run.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Wraps [`System`] and counts while a [`measure`] is running. Outside of it
/// every call pays one relaxed load, so timed runs are not slowed by the
/// bookkeeping.
struct CountingAlloc;

static TRACKING: AtomicBool = AtomicBool::new(false);
/// Bytes allocated minus bytes freed since the measurement began.
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

fn on_alloc(size: usize) {
    if TRACKING.load(Ordering::Relaxed) {
        let signed = isize::try_from(size).unwrap_or(isize::MAX);
        let live = LIVE.fetch_add(signed, Ordering::Relaxed) + signed;
        PEAK.fetch_max(live, Ordering::Relaxed);
        BYTES.fetch_add(size, Ordering::Relaxed);
        CALLS.fetch_add(1, Ordering::Relaxed);
    }
}

fn on_free(size: usize) {
    if TRACKING.load(Ordering::Relaxed) {
        LIVE.fetch_sub(
            isize::try_from(size).unwrap_or(isize::MAX),
            Ordering::Relaxed,
        );
    }
}

// SAFETY: every method forwards its arguments unchanged to `System` and
// returns what `System` returned, so `System`'s guarantees are ours. The
// bookkeeping only touches atomics and never allocates.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: our caller upholds `alloc`'s contract for `layout`.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            on_alloc(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: our caller upholds `alloc_zeroed`'s contract for `layout`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            on_alloc(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, i.e. from `System`, with
        // `layout`, as our caller guarantees.
        unsafe { System.dealloc(ptr, layout) };
        on_free(layout.size());
    }

    /// Counted like dhat does: a new block of `new_size` bytes and the old
    /// block freed. The new block is counted first, so the peak is an upper
    /// bound (a move briefly holds both blocks; an in-place grow does not).
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: our caller upholds `realloc`'s contract for `ptr`,
        // `layout` and `new_size`.
        let new_ptr = unsafe { System.realloc(ptr, layout, new_size) };
        if !new_ptr.is_null() {
            on_alloc(new_size);
            on_free(layout.size());
        }
        new_ptr
    }
}

/// What one measured run allocated.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    /// Bytes requested over the run (a realloc counts its new size).
    pub bytes: usize,
    /// Allocation calls (alloc, alloc_zeroed, realloc).
    pub calls: usize,
    /// Highest live heap during the run, above what was live before it. What
    /// the run returns is still live at its end, so it is included.
    pub peak: usize,
    /// Heap still live when the run returned: what it returned (and any
    /// leak). `peak - live` is what the run needed beyond its result.
    pub live: usize,
}

/// Runs `run` with counting on. The benchmark is single-threaded, so every
/// counted call belongs to `run`.
pub fn measure<T>(run: impl FnOnce() -> T) -> (T, Usage) {
    LIVE.store(0, Ordering::SeqCst);
    PEAK.store(0, Ordering::SeqCst);
    BYTES.store(0, Ordering::SeqCst);
    CALLS.store(0, Ordering::SeqCst);
    TRACKING.store(true, Ordering::SeqCst);
    let out = run();
    TRACKING.store(false, Ordering::SeqCst);
    let usage = Usage {
        live: usize::try_from(LIVE.load(Ordering::SeqCst)).unwrap_or(0),
        bytes: BYTES.load(Ordering::SeqCst),
        calls: CALLS.load(Ordering::SeqCst),
        peak: usize::try_from(PEAK.load(Ordering::SeqCst)).unwrap_or(0),
    };
    (out, usage)
}
