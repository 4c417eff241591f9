"""The type check bites: tsc (make lint, hooks/typecheck.py) fails on a script that reads a key the contract's
generated types lack, a result's or a runtime message's, and passes the same script reading the right key."""

import json

from hooks import typecheck

READ = """/** @import {{ {type} }} from '../runtime/contract.js' */
/** @param {{{type}}} value */
export const read = (value) => value.{key};
"""
# (type, a key it has, a key it lacks): a result a page reads, the bridge's pass, what a loaded model is.
READS = [("GenerateResult", "totals", "total"), ("BridgePass", "kvSeconds", "kv_seconds"), ("LoadInfo", "threads", "thread")]


def test_a_script_reading_a_key_its_type_lacks_fails_the_type_check(tmp_path):
    links = typecheck.lay_out(tmp_path / "site")
    panels = tmp_path / "site" / "assets" / "onepass" / "panels"
    scripts = []
    for type_, right, wrong in READS:
        for name, key in [(f"right-{type_}.js", right), (f"wrong-{type_}.js", wrong)]:
            (panels / name).write_text(READ.format(type=type_, key=key))
            scripts.append(f"site/assets/onepass/panels/{name}")
    (tmp_path / "tsconfig.json").write_text(json.dumps({"extends": str(typecheck.ROOT / "tsconfig.json"),
                                                        "include": [*scripts, "site/globals.d.ts"]}))
    done = typecheck.tsc(tmp_path / "tsconfig.json", links)
    assert done.returncode != 0, done.stdout
    errors = [line for line in done.stdout.splitlines() if "error TS" in line]
    for type_, right, wrong in READS:
        assert any(f"wrong-{type_}.js" in line and f"'{wrong}' does not exist on type '{type_}'" in line
                   for line in errors), done.stdout
    assert not [line for line in errors if "right-" in line], done.stdout
    assert len(errors) == len(READS), done.stdout
