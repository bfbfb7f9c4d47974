"""envs.files: a write either puts the whole new file in place or leaves the old one whole."""

from __future__ import annotations

import os

import pytest

from envs.files import atomic_write_bytes, atomic_write_text


def test_a_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("old")
    assert atomic_write_text(path, "new ✓") == path
    assert path.read_text(encoding="utf-8") == "new ✓"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


@pytest.mark.parametrize("fail_at", ["write", "replace"])
def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, fail_at):
    path = tmp_path / "summary.csv"
    path.write_bytes(b"old,rows\n")

    def crash(*args, **kwargs):
        raise OSError("No space left on device")

    if fail_at == "replace":
        monkeypatch.setattr(os, "replace", crash)
    else:
        monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="No space"):
        atomic_write_bytes(path, b"new,rows\n" * 1000)
    monkeypatch.undo()
    assert path.read_bytes() == b"old,rows\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.csv"]


def test_a_tournament_that_fails_while_writing_keeps_the_previous_results(tmp_path, monkeypatch):
    """Running a tournament again into its folder: a crash while the new outputs are written
    leaves the previous results.json readable."""
    import json

    from arena.report import write_outputs
    from arena.results import TournamentConfig
    from arena.tournament import run_tournament

    cfg = TournamentConfig(game="soko", agents=["call", "raise"], hands=20, seed=1, workers=1,
                           progress=False, write=False)
    result = run_tournament(cfg)
    write_outputs(result, tmp_path)
    before = (tmp_path / "results.json").read_text()
    assert [a["name"] for a in json.loads(before)["agents"]] == ["call", "raise"]

    real = os.replace

    def crash_on_results(src, dst):
        if str(dst).endswith("results.json"):
            raise OSError("disk pulled out")
        real(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_results)
    with pytest.raises(OSError):
        write_outputs(result, tmp_path, argv=["again"])
    monkeypatch.undo()
    assert (tmp_path / "results.json").read_text() == before
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_check_folder_names_what_is_in_the_way_and_makes_nothing(tmp_path, monkeypatch):
    from envs.files import check_folder, make_folder

    def why(call, path) -> str:
        with pytest.raises(ValueError) as info:
            call(path)
        return str(info.value)

    (tmp_path / "f").write_text("")
    inside = tmp_path / "f" / "a" / "b"
    assert why(check_folder, inside) == (f"cannot make the folder {inside}: {tmp_path / 'f'} is a file, "
                                         "not a folder")
    assert check_folder(tmp_path / "new" / "deeper") == tmp_path / "new" / "deeper"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]
    assert make_folder(tmp_path / "new" / "deeper").is_dir()
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    x = tmp_path / "x"
    assert why(make_folder, x) == f"cannot make the folder {x}: {tmp_path} is not writable"
    assert why(make_folder, tmp_path) == f"cannot write in the folder {tmp_path}: {tmp_path} is not writable"
