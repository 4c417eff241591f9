"""benchmarks/FINDINGS.md stays navigable: every entry the code cites, and every link of its "Current decisions"
table, finds its heading.

Code cites an entry by the file's path, a comma and the start of the entry's heading in double quotes (in a comment
or docstring, possibly wrapped over lines); links use GitHub's anchors (the heading's text, lowercased, punctuation dropped, spaces as
hyphens, a repeated one numbered)."""

import re
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FINDINGS = ROOT / "benchmarks" / "FINDINGS.md"
CITING = ["py", "draft", "model_export", "hooks", "runtime", "docs", "benchmarks", "tests", "tools", "overrides"]
SUFFIXES = {".py", ".js", ".mjs", ".md", ".html", ".yml", ".toml", ".txt", ".json"}
# The file's name, a comma, then the quoted title; written so that this file does not cite itself.
CITATION = re.compile("FINDINGS" + r"\.md,\s*" + '"([^"]+)"')
# A wrapped comment or docstring goes on with its comment marker: drop it with the line break.
CONTINUATION = re.compile(r"\s*\n\s*(?:#|//|\*)?\s*")


def plain(heading):
    """A heading's text as read: without Markdown's code and emphasis marks."""
    return re.sub(r"[`*]", "", heading).strip()


def anchor(text):
    """GitHub's anchor for a heading (github-slugger): letters, digits, '-' and '_' kept, spaces as hyphens."""
    text = plain(text).lower()
    kept = "".join(c for c in text if c in "-_ " or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def headings(levels=False):
    """Every heading of FINDINGS.md, in order, outside code blocks (with its level if asked)."""
    found, fenced = [], False
    for line in FINDINGS.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"(#{1,6}) (.+)", line)):
            found.append((len(m.group(1)), m.group(2).strip()) if levels else m.group(2).strip())
    return found


def anchors():
    """Each heading's anchor, numbered as GitHub numbers a repeated one."""
    seen, result = {}, []
    for heading in headings():
        slug = anchor(heading)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        result.append(slug if count == 0 else f"{slug}-{count}")
    return result


def citations():
    """(file, title) for every citation of a FINDINGS entry by title in the repository's code and pages."""
    files = [p for d in CITING if (ROOT / d).is_dir() for p in (ROOT / d).rglob("*")]
    files += [ROOT / name for name in ("Makefile", "README.md", "DEVELOPERS.md")]
    found = []
    for path in files:
        if path.suffix not in SUFFIXES and path.name != "Makefile" or not path.is_file() or path == FINDINGS:
            continue
        if any(part in {"node_modules", "__pycache__", ".venv"} for part in path.parts):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for m in CITATION.finditer(CONTINUATION.sub(" ", text)):
            found.append((path.relative_to(ROOT).as_posix(), " ".join(m.group(1).split())))
    return found


def test_the_code_cites_findings_by_title():
    """The scan finds the citations it is meant to check (a broken pattern would pass every check below)."""
    cited = citations()
    assert len(cited) >= 10
    assert ("model_export/calibration.py", "It differed again") in cited


def test_every_finding_cited_in_the_code_has_its_heading():
    titles = [plain(h) for h in headings()]
    missing = [(path, title) for path, title in citations() if not any(t.startswith(title) for t in titles)]
    assert not missing, f"cited in the code, no FINDINGS heading starts so: {missing}"


def test_every_link_in_findings_finds_its_heading():
    known = set(anchors())
    links = re.findall(r"\]\(#([^)]+)\)", FINDINGS.read_text(encoding="utf-8"))
    assert links, "the Current decisions table links its entries"
    assert not sorted(set(links) - known)


def test_current_decisions_come_first_and_earlier_entries_last():
    """New entries go in their topic's part: everything under "Earlier" names what replaced it."""
    parts = [text for level, text in headings(levels=True) if level == 2]
    assert parts[0] == "Current decisions"
    assert parts[-1] == "Earlier"
    earlier = FINDINGS.read_text(encoding="utf-8").split("\n## Earlier\n", 1)[1]
    entries = re.findall(r"^### (.+)\n\n(.*)$", earlier, flags=re.MULTILINE)
    assert entries
    unexplained = [title for title, first in entries if not first.startswith("*Replaced by [")]
    assert not unexplained, f"under Earlier without naming what replaced them (new entries go above): {unexplained}"


def test_anchors_follow_githubs_rules():
    assert anchor("`model.ort` at the *extended* level") == "modelort-at-the-extended-level"
    assert anchor("α against the amount of data: what α ≥ 0.6 would cost here") == (
        "α-against-the-amount-of-data-what-α--06-would-cost-here"
    )
    assert anchor("Step 5's Past tense") == "step-5s-past-tense"
