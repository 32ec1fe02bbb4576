#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

#[test]
fn sizes_read_naturally() {
    assert_eq!(fmt_size(1), "1 byte");
    assert_eq!(fmt_size(512), "512 bytes");
    assert_eq!(fmt_size(2048), "2 KiB");
    assert_eq!(fmt_size(1536), "1.5 KiB");
    assert_eq!(fmt_size(MAX_FILE_BYTES), "1 MiB");
    assert_eq!(fmt_size(MAX_FILE_BYTES + 1), "1.0 MiB");
    assert_eq!(fmt_size(3 * MAX_FILE_BYTES / 2), "1.5 MiB");
}
