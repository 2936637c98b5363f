"""The tools that run Thunder's tests on a GPU machine in pieces
(tools/gpu_thunder.sh): the shard plugin (tools/pytest_shard.py) and the
report that merges the shards' results (tools/thunder_test_report.py).
CPU only."""

import os
import subprocess
import sys
import textwrap

import pytest

TOOLS = os.path.join(os.path.dirname(__file__), "..", "..", "tools")
sys.path.insert(0, TOOLS)

import pytest_shard  # noqa: E402


def collected(tmp_path, shard):
    test_file = tmp_path / "test_many.py"
    test_file.write_text(
        "import pytest\n@pytest.mark.parametrize('i', range(40))\ndef test_case(i):\n    pass\n"
    )
    env = dict(os.environ, PYTHONPATH=TOOLS, PYTEST_SHARD=shard)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "pytest_shard", "--collect-only", "-q",
         "-p", "no:cacheprovider", str(test_file)],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return {line for line in result.stdout.splitlines() if "::" in line}


def test_shards_split_the_tests_into_disjoint_parts_that_cover_them(tmp_path):
    parts = [collected(tmp_path, f"{k}/3") for k in range(3)]
    everything = collected(tmp_path, "")
    assert len(everything) == 40
    assert set().union(*parts) == everything
    assert sum(len(p) for p in parts) == 40
    assert all(parts), "a shard of 40 tests is empty"


def test_a_bad_shard_names_the_expected_form():
    with pytest.raises(ValueError, match="k/n"):
        pytest_shard.parse_shard("3")
    with pytest.raises(ValueError, match="0 <= k < n"):
        pytest_shard.parse_shard("3/3")


def junit(cases):
    body = ""
    for name, outcome in cases:
        inner = {"passed": "", "failed": '<failure message="boom"/>', "skipped": "<skipped/>"}[outcome]
        body += f'<testcase classname="t" name="{name}">{inner}</testcase>'
    return f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>'


def test_the_report_merges_shards_and_compares_only_what_both_finished(tmp_path):
    (tmp_path / "fuser_test_x.0of2.xml").write_text(junit([("a", "passed"), ("b", "failed")]))
    (tmp_path / "fuser_test_x.0of2.log").write_text("")
    # Shard 1 stopped at its timeout: only its log, with the tests it finished.
    (tmp_path / "fuser_test_x.1of2.log").write_text(
        textwrap.dedent(
            """\
            [gw0] [ 50%] PASSED t.py::c
            [gw1] [ 60%] SKIPPED t.py::d
            """
        )
    )
    (tmp_path / "nvfuser_test_x.xml").write_text(
        junit([("a", "failed"), ("b", "passed"), ("c", "passed"), ("e", "passed")])
    )
    report = subprocess.run(
        [sys.executable, os.path.join(TOOLS, "thunder_test_report.py"), str(tmp_path)],
        capture_output=True, text=True,
    )
    assert report.returncode == 0, report.stderr
    out = report.stdout
    assert "| test_x | fuser (stopped at its timeout: the tests that finished) | 2 | 1 | 1 |" in out
    assert "| test_x | nvfuser | 3 | 1 | 0 |" in out
    # a, b and c finished on both; e only on nvFuser and d only on fuser.
    assert "Of the 3 tests both finished, fuser passes 2 and nvFuser 2." in out
    assert "Pass on nvFuser only: 1; on fuser only: 1." in out
    assert "`b`: boom" in out
