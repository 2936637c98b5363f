"""Every design note the code cites exists (doc/*.md), and the code cites
the project's own design document rather than one outside the repository."""

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ["csrc", "python", "tests", "tools", "benchmarks", "runtime", "examples", "doc"]
SUFFIXES = {".h", ".cpp", ".py", ".md", ".sh", ".txt", ".cmake"}


def source_files():
    for folder in SOURCES:
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in SUFFIXES:
                yield path
    yield ROOT / "README.md"


def test_cited_docs_exist():
    cited = {}
    for path in source_files():
        for name in re.findall(r"\bdoc/([A-Za-z0-9_]+\.md)", path.read_text(errors="ignore")):
            cited.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert cited, "no citation of doc/*.md found: the scan is broken"
    assert "design.md" in cited and "replay.md" in cited and "indexing.md" in cited
    missing = {name: files for name, files in cited.items() if not (ROOT / "doc" / name).is_file()}
    assert not missing, f"cited but missing: {missing}"


def test_no_citation_of_an_outside_design_document():
    stale = [
        str(path.relative_to(ROOT))
        for path in source_files()
        if path.name != "test_docs.py" and "DESIGN §" in path.read_text(errors="ignore")
    ]
    assert not stale, f"cite doc/design.md instead of DESIGN in {stale}"


def test_the_readme_names_every_dump_option():
    # The names come from C++ (csrc/base/options.cpp), not a copy here.
    from fuser import _C

    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Debug dumps")[1].split("\n## ")[0]
    missing = [n for n in _C.dump_option_names() if f"`{n}`" not in section and f"`{n}:" not in section]
    assert missing == []
