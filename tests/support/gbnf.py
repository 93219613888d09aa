"""A matcher for the GBNF subset the project sends (literals, character classes, groups, alternatives,
rule references; no repetition), so tests check the very grammar text a server receives.

`matches(grammar, text)` compiles the grammar's `root` rule to a regular expression (the subset is
regular) and tells whether the whole text is one of its sentences.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(
    r'\s*(?:(?P<lit>"(?:[^"\\]|\\.)*")|(?P<cls>\[[^\]]*\])|(?P<op>[()|])|(?P<name>[a-z][a-z0-9-]*))'
)


def _rules(grammar: str) -> dict[str, str]:
    rules = {}
    for line in grammar.splitlines():
        if line.strip():
            name, sep, body = line.partition("::=")
            assert sep, f"not a rule: {line!r}"
            rules[name.strip()] = body
    return rules


def _regex(body: str, rules: dict[str, str], depth: int = 0) -> str:
    assert depth < 20, "recursive grammar: not in the subset"
    out = []
    position = 0
    body = body.rstrip()
    while position < len(body):
        match = _TOKEN.match(body, position)
        assert match, f"not in the subset at {body[position:]!r}"
        position = match.end()
        if match["lit"]:
            text = match["lit"][1:-1].encode().decode("unicode_escape")
            out.append(re.escape(text))
        elif match["cls"]:
            out.append(match["cls"])
        elif match["op"]:
            out.append({"(": "(?:", ")": ")", "|": "|"}[match["op"]])
        else:
            out.append(f"(?:{_regex(rules[match['name']], rules, depth + 1)})")
    return "".join(out)


def matches(grammar: str, text: str) -> bool:
    rules = _rules(grammar)
    return re.fullmatch(_regex(rules["root"], rules), text) is not None
