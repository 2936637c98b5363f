"""A pytest plugin that appends each finished test's outcome to a JSON-lines
file as it finishes, so that a run stopped at its time limit keeps every
result (and failure message) it reached, and a later run can resume:

    PYTEST_OUTCOMES=run.jsonl [PYTEST_SKIP_RECORDED=earlier.jsonl] \
        python3 -m pytest -p pytest_outcomes ...       (tools/ on PYTHONPATH)

One line per test: {"name": <test name, no file>, "outcome": "passed" |
"failed" | "skipped", "message": <first line of the failure or skip>}.
Errors in setup or teardown and strict unexpected passes count as
failed, xfails as skipped and other unexpected passes (XPASS) as passed,
as pytest's exit status does. A test whose worker crashed is
failed ("worker crashed"); a test cut off by the time limit is not
written. PYTEST_SKIP_RECORDED names a copy of an earlier record whose
tests are deselected (a copy that no run writes to, so that a worker
pytest-xdist starts in place of a crashed one collects what the others
did). Under pytest-xdist only the controller writes.
(tools/gpu_thunder.sh runs Thunder's test_ops.py this way across GPU runs;
tools/thunder_test_report.py reads the file.)"""

import json
import os


def test_name(nodeid):
    return nodeid.split("::", 1)[-1]


def recorded_names(path):
    """The test names a JSON-lines file holds (none if it does not exist)."""
    if not os.path.exists(path):
        return set()
    names = set()
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    names.add(json.loads(line)["name"])
                except (ValueError, KeyError):
                    pass  # a line cut by a kill mid-write
    return names


def first_line(report):
    if report.skipped and isinstance(report.longrepr, tuple):
        text = str(report.longrepr[2])
    else:
        crash = getattr(report.longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(report.longrepr or "")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


class OutcomeWriter:
    def __init__(self, path):
        self.path = path
        self.pending = {}  # nodeid -> (outcome, message) so far

    def pytest_runtest_logreport(self, report):
        outcome, message = self.pending.get(report.nodeid, ("passed", ""))
        if outcome == "passed":
            if report.failed:
                outcome, message = "failed", first_line(report)
            elif report.skipped:
                outcome, message = "skipped", first_line(report)
            elif report.when == "call" and hasattr(report, "wasxfail"):
                message = "XPASS: passed, though marked xfail"
        # xdist reports a crashed worker's test once, with when "???".
        if report.when in ("teardown", "???"):
            self.pending.pop(report.nodeid, None)
            record = {"name": test_name(report.nodeid), "outcome": outcome, "message": message}
            with open(self.path, "a") as f:
                f.write(json.dumps(record) + "\n")
        else:
            self.pending[report.nodeid] = (outcome, message)


def pytest_configure(config):
    path = os.environ.get("PYTEST_OUTCOMES")
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(OutcomeWriter(path), "pytest_outcomes_writer")


def pytest_collection_modifyitems(config, items):
    path = os.environ.get("PYTEST_SKIP_RECORDED")
    if not path:
        return
    done = recorded_names(path)
    dropped = [item for item in items if test_name(item.nodeid) in done]
    if dropped:
        items[:] = [item for item in items if test_name(item.nodeid) not in done]
        config.hook.pytest_deselected(items=dropped)
