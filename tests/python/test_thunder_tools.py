"""The tools that run Thunder's tests on a GPU machine in pieces
(tools/gpu_thunder.sh): the shard plugin (tools/pytest_shard.py), the
outcome record that lets a run resume (tools/pytest_outcomes.py) and the
report that merges the shards' results (tools/thunder_test_report.py).
CPU only."""

import json
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


OUTCOME_TESTS = """
import pytest

def test_passes():
    pass

def test_fails():
    assert 1 == 2, "one is not two"

@pytest.mark.skip(reason="not here")
def test_skipped():
    pass

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert False

@pytest.mark.xfail(reason="thought broken")
def test_unexpected_pass():
    pass

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_setup_error(broken):
    pass
"""


def run_recorded(tmp_path, record, skip_recorded="", workers=2):
    test_file = tmp_path / "test_outcomes.py"
    test_file.write_text(OUTCOME_TESTS)
    env = dict(os.environ, PYTHONPATH=TOOLS, PYTEST_OUTCOMES=str(record),
               PYTEST_SKIP_RECORDED=skip_recorded)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "pytest_outcomes", "-q", "-p", "no:cacheprovider",
         "-n", str(workers), str(test_file)],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )


def test_the_outcome_record_holds_each_finished_test_and_its_message(tmp_path):
    pytest.importorskip("xdist")
    import pytest_outcomes

    record = tmp_path / "run.jsonl"
    run_recorded(tmp_path, record)
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    by_name = {r["name"]: (r["outcome"], r["message"]) for r in lines}
    assert len(lines) == 6, lines  # one line per test, written by the controller only
    assert by_name["test_passes"] == ("passed", "")
    assert by_name["test_fails"][0] == "failed"
    assert "one is not two" in by_name["test_fails"][1]
    assert by_name["test_skipped"] == ("skipped", "Skipped: not here")
    assert by_name["test_expected_failure"][0] == "skipped"
    assert by_name["test_unexpected_pass"] == ("passed", "XPASS: passed, though marked xfail")
    assert by_name["test_setup_error"][0] == "failed"
    assert "fixture broke" in by_name["test_setup_error"][1]
    assert pytest_outcomes.recorded_names(str(record)) == set(by_name)


def test_a_resumed_run_runs_only_the_tests_the_record_lacks(tmp_path):
    pytest.importorskip("xdist")
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text(
        json.dumps({"name": "test_passes", "outcome": "passed", "message": ""}) + "\n"
        + json.dumps({"name": "test_fails", "outcome": "failed", "message": "x"}) + "\n"
        + '{"name": "test_ski'  # a line cut by a kill mid-write
    )
    record = tmp_path / "run.jsonl"
    result = run_recorded(tmp_path, record, skip_recorded=str(earlier))
    assert "1 error" in result.stdout, result.stdout
    names = {json.loads(line)["name"] for line in record.read_text().splitlines()}
    assert names == {"test_skipped", "test_expected_failure", "test_unexpected_pass",
                     "test_setup_error"}


def test_the_report_reads_the_outcome_records_before_junit_reports(tmp_path):
    records = [("a", "passed", ""), ("b", "failed", "RuntimeError: boom"), ("a", "failed", "late")]
    (tmp_path / "fuser_test_y.jsonl").write_text(
        "".join(json.dumps({"name": n, "outcome": o, "message": m}) + "\n" for n, o, m in records)
    )
    (tmp_path / "fuser_test_y.xml").write_text(junit([("a", "passed"), ("b", "passed")]))
    (tmp_path / "nvfuser_test_y.jsonl").write_text(
        json.dumps({"name": "a", "outcome": "passed", "message": ""}) + "\n"
    )
    report = subprocess.run(
        [sys.executable, os.path.join(TOOLS, "thunder_test_report.py"), str(tmp_path)],
        capture_output=True, text=True,
    )
    assert report.returncode == 0, report.stderr
    # A later line for a test replaces an earlier one; the nvFuser record has
    # no junit report, so its run stopped at its timeout.
    assert "| test_y | fuser | 0 | 2 | 0 |" in report.stdout
    assert "| test_y | nvfuser (stopped at its timeout: the tests that finished) | 1 | 0 | 0 |" in report.stdout
    assert "`b`: RuntimeError: boom" in report.stdout


def test_the_model_check_names_the_models_it_knows():
    result = subprocess.run(
        [sys.executable, os.path.join(TOOLS, "thunder_model_check.py"), "resnet"],
        capture_output=True, text=True,
    )
    assert result.returncode != 0
    assert "nanogpt|llama" in result.stderr and "'resnet'" in result.stderr
