#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn a_blob_is_kept_once_by_its_hash_and_refused_when_changed() {
    let dir = tempfile::tempdir().unwrap();
    let blobs = Blobs {
        dir: dir.path().join("blobs"),
    };
    let sha = blobs.put(b"hello").unwrap();
    assert_eq!(
        sha,
        "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    );
    assert_eq!(blobs.put(b"hello").unwrap(), sha);
    assert_eq!(blobs.get(&sha, 5).unwrap(), b"hello");
    // Bounded, named by a hash only, and checked.
    assert!(blobs.get(&sha, 4).is_err());
    assert_eq!(
        blobs.get("../log", 99).unwrap_err(),
        "\"../log\" is not the SHA-256 of a kept copy"
    );
    let path = dir.path().join("blobs").join(&sha);
    std::fs::write(&path, b"hellO").unwrap();
    assert_eq!(
        blobs.get(&sha, 5).unwrap_err(),
        format!("its copy {} was changed since it was kept", path.display())
    );
    // Kept again whole when what is there is not it.
    assert_eq!(blobs.put(b"hello").unwrap(), sha);
    assert_eq!(blobs.get(&sha, 5).unwrap(), b"hello");
    std::fs::remove_file(&path).unwrap();
    assert!(
        blobs
            .get(&sha, 5)
            .unwrap_err()
            .ends_with("cannot be read: no such file or directory"),
    );
}

#[test]
fn an_id_that_is_not_a_plain_name_has_no_blobs() {
    let dir = tempfile::tempdir().unwrap();
    assert!(Blobs::of(dir.path(), "../x").is_none());
    assert!(Blobs::of(dir.path(), "").is_none());
}
