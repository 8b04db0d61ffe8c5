import json
import os

import pytest

from conftest import REPO
from driver import suites
from driver.errors import BadInput


def test_shipped_suites_load():
    names = suites.available_suites(REPO)
    assert "quick" in names and "standard" in names
    for n in names:
        s = suites.load_suite(n, REPO)
        assert s["cases"] and s["reps"] >= 1
        for c in s["cases"]:
            assert c["pattern"] in suites.PATTERNS
            for r in s["ranks"]:
                assert suites.file_bytes(c, r) > 0


def test_every_pattern_in_quick():
    s = suites.load_suite("quick", REPO)
    assert {c["pattern"] for c in s["cases"]} == set(suites.PATTERNS)


def test_parse_size():
    assert suites.parse_size("64K") == 65536
    assert suites.parse_size("1M") == 1 << 20
    assert suites.parse_size("1.5MiB") == 3 << 19
    assert suites.parse_size(8) == 8
    for bad in ("abc", "-1M", "1X", True):
        with pytest.raises(BadInput):
            suites.parse_size(bad)


def test_case_argv_and_defaults():
    c = suites.validate_case({"pattern": "tile", "args": {"elem-size": "64K", "tile": [8, 4]}}, "t")
    assert c["name"] == "tile 64KiB"
    assert suites.case_argv(c) == ["--pattern", "tile", "--elem-size", "64K", "--tile", "8", "4"]
    c = suites.validate_case({"pattern": "strided", "args": {"mode": "fileview", "no-hole-check": True}}, "t")
    assert suites.case_argv(c) == ["--pattern", "strided", "--mode", "fileview", "--no-hole-check"]
    c = suites.validate_case({"pattern": "block3d", "args": {"n": 64, "grid": [1, 1, 0]}}, "t")
    assert suites.case_argv(c) == ["--pattern", "block3d", "--n", "64", "--grid", "1", "1", "0"]


@pytest.mark.parametrize("case", [
    {"pattern": "tile", "args": {"grid": [1, 0, 0]}},   # a 2-D pattern takes two entries
    {"pattern": "block3d", "args": {"grid": [1, 2]}},   # a 3-D one three
    {"pattern": "tile", "args": {"grid": [1, -1]}},
    {"pattern": "tile", "args": {"grid": "1 0"}},
])
def test_bad_grid_rejected(case):
    with pytest.raises(BadInput, match="grid must be"):
        suites.validate_case(case, "t")


def test_file_bytes_match_weft_bench_formulas():
    ior = {"pattern": "ior", "args": {"block-size": "1M", "segments": 4}}
    assert suites.file_bytes(ior, 3) == 12 << 20
    sv = {"pattern": "strided", "args": {"mode": "fileview", "elem-size": 8, "count": 100, "gap": 4}}
    assert suites.file_bytes(sv, 2) == 100 * 2 * 12 - 4
    ck = {"pattern": "checkpoint", "args": {"n": 10}}
    assert suites.file_bytes(ck, 4) == 10 * 10 * 8 + 64
    fl = {"pattern": "flash", "args": {"nvars": 2, "nxb": 4, "blocks": 3}}
    assert suites.file_bytes(fl, 2) == 2 * 2 * 3 * 64 * 8


@pytest.mark.parametrize("data,msg", [
    ({"cases": [{"pattern": "nope"}]}, "unknown pattern 'nope'"),
    ({"cases": [{"pattern": "ior", "args": {"tile": [1, 2]}}]}, "has no option"),
    ({"cases": [{"pattern": "ior", "args": {"mode": "sideways"}}]}, "coll or indep"),
    ({"cases": []}, "non-empty"),
    ({"cases": [{"pattern": "ior"}], "reps": 0}, "reps"),
    ({"cases": [{"pattern": "ior"}], "ranks": [0]}, "ranks"),
    ({"cases": [{"pattern": "ior"}], "bogus": 1}, "unknown key"),
    ({"cases": [{"pattern": "ior"}, {"pattern": "ior"}]}, "two cases named"),
])
def test_bad_suites(data, msg):
    with pytest.raises(BadInput, match=msg):
        suites.validate_suite(data)


def test_suite_from_file(tmp_path):
    p = tmp_path / "mine.json"
    p.write_text(json.dumps({"reps": 2, "cases": [{"pattern": "block3d", "args": {"n": 16}}]}))
    s = suites.load_suite(str(p), REPO)
    assert s["name"] == "mine" and s["reps"] == 2 and s["cases"][0]["name"] == "block3d"
    with pytest.raises(BadInput, match="unknown suite"):
        suites.load_suite("no-such-suite", REPO)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BadInput, match="cannot read suite"):
        suites.load_suite(str(bad), REPO)
