#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn a_workspace_around_the_directory_is_where_the_command_runs() {
    let place = Place::find(
        Path::new("/w/sub"),
        Some(PathBuf::from("/w")),
        &env(&[("HOME", "/h")]),
    )
    .unwrap();
    assert_eq!(place, Place::Workspace(PathBuf::from("/w")));
    assert_eq!(place.root(), Path::new("/w"));
    assert_eq!(place.notice(Some(Path::new("/h"))), None);
}

#[test]
fn a_plain_directory_keeps_its_conversations_in_the_users_data_directory() {
    let dir = tempfile::tempdir().unwrap();
    let digest = crate::ledger::digest(dir.path());
    // XDG_DATA_HOME first, else ~/.local/share; an empty value is unset.
    let xdg = Place::find(
        dir.path(),
        None,
        &env(&[("HOME", "/h"), ("XDG_DATA_HOME", "/x")]),
    )
    .unwrap();
    assert_eq!(
        xdg,
        Place::Directory {
            dir: dir.path().to_path_buf(),
            data: PathBuf::from(format!("/x/jp/directories/{digest}")),
        }
    );
    assert_eq!(xdg.root(), dir.path());
    let home = Place::find(
        dir.path(),
        None,
        &env(&[("HOME", "/h"), ("XDG_DATA_HOME", "")]),
    )
    .unwrap();
    let Place::Directory { data, .. } = &home else {
        panic!("{home:?}");
    };
    assert_eq!(
        data,
        &PathBuf::from(format!("/h/.local/share/jp/directories/{digest}"))
    );
    assert_eq!(
        home.notice(Some(Path::new("/h"))).unwrap(),
        format!(
            "no workspace here: conversations are kept in ~/.local/share/jp/directories/{digest}/conversations, and every tool call that may change something is asked (`jp init` makes this directory a workspace)"
        )
    );
    // A data directory outside HOME is shown as it is.
    assert_eq!(
        xdg.notice(Some(Path::new("/h"))).unwrap(),
        format!(
            "no workspace here: conversations are kept in /x/jp/directories/{digest}/conversations, and every tool call that may change something is asked (`jp init` makes this directory a workspace)"
        )
    );
}

#[test]
fn without_a_workspace_or_a_data_directory_there_is_no_place() {
    assert_eq!(
        Place::find(Path::new("/d"), None, &env(&[("HOME", "")])).unwrap_err(),
        "no jp workspace here or above /d, and no data directory to keep its conversations in (neither XDG_DATA_HOME nor HOME is set); run `jp init` to make this directory a workspace"
    );
}

#[test]
fn a_plain_directorys_store_is_made_for_the_user_only_and_nothing_in_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let data_home = data.path().display().to_string();
    let place = Place::find(dir.path(), None, &env(&[("XDG_DATA_HOME", &data_home)])).unwrap();
    let Place::Directory { data: kept, .. } = &place else {
        panic!("{place:?}");
    };
    assert!(place.stored().is_none(), "nothing is made before a query");
    let store = place.store().unwrap();
    assert_eq!(store.root(), kept.join("conversations"));
    let (conversation, lock) = store.create().unwrap();
    drop(lock);
    store.set_active(&conversation.id).unwrap();
    assert_eq!(
        place.stored().unwrap().ids().unwrap(),
        vec![conversation.id.clone()]
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(kept).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}

#[test]
fn outside_a_workspace_only_jps_reading_tools_are_not_asked() {
    let plain = Place::Directory {
        dir: PathBuf::from("/d"),
        data: PathBuf::from("/x"),
    };
    let workspace = Place::Workspace(PathBuf::from("/w"));
    let asked_in = |place: Option<&Place>| {
        let mut tools: Vec<Option<DefaultTool>> = DefaultTool::ALL.map(Some).to_vec();
        tools.push(None);
        tools
            .into_iter()
            .filter(|tool| asked(place, *tool).is_some())
            .map(|tool| tool.map_or("(not jp's)", DefaultTool::name))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        asked_in(Some(&plain)),
        [
            "fs_create_file",
            "fs_modify_file",
            "fs_delete_file",
            "run_command",
            "(not jp's)"
        ]
    );
    assert!(asked_in(Some(&workspace)).is_empty());
    assert!(asked_in(None).is_empty());
    assert_eq!(
        asked(Some(&plain), None),
        Some("there is no workspace here (every tool call that may change something is asked)")
    );
}

#[test]
fn without_a_settled_place_a_root_has_its_workspaces_store() {
    // No test here settles the place: it is the process's.
    assert!(here().is_none());
    let root = Path::new("/w");
    assert_eq!(store_at(root).root(), Path::new("/w/.jp/conversations"));
}
