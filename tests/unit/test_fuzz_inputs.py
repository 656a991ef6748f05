"""Fuzz: any ground-truth or run file, however broken, ends in the project's typed error, never a traceback.

Hypothesis writes files of random bytes, of random JSON/YAML values and of mutated valid files;
loading them may succeed or raise :class:`TruthError` / :class:`RunError`, nothing else.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragdiag.evaluation.external import RunError, load_run, parse_run
from ragdiag.documents.truth import TruthError, load_truth

from tiny import TINY_TRUTH

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10**300, max_value=10**400),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=20)
KEYS = ["questions", "ood", "id", "needle", "queries", "course", "ticket", "kind", "query", "query_id", "hits",
        "text", "doc", "start", "end", "score"]


def _mutate(obj, data):
    """Replace one value somewhere in ``obj`` by a random value (or drop / duplicate a key)."""
    if isinstance(obj, dict) and obj:
        key = data.draw(st.sampled_from(sorted(obj)))
        action = data.draw(st.sampled_from(["replace", "drop", "recurse", "recurse"]))
        out = dict(obj)
        if action == "replace":
            out[key] = data.draw(values)
        elif action == "drop":
            del out[key]
        else:
            out[key] = _mutate(obj[key], data)
        return out
    if isinstance(obj, list) and obj:
        i = data.draw(st.integers(0, len(obj) - 1))
        return obj[:i] + [_mutate(obj[i], data)] + obj[i + 1:]
    return data.draw(values)


def _write(raw: bytes, suffix: str) -> Path:
    f = tempfile.NamedTemporaryFile(suffix=suffix, delete=False)  # noqa: SIM115 - removed by the caller
    f.write(raw)
    f.close()
    return Path(f.name)


def _load_truth(raw: bytes, suffix: str, corpus):
    path = _write(raw, suffix)
    try:
        load_truth(path, corpus)
    except TruthError:
        pass
    finally:
        path.unlink()


def _load_run(raw: bytes, truth, corpus):
    path = _write(raw, ".jsonl")
    try:
        load_run(path, truth, corpus=corpus, distances=bool(raw[:1] == b"{"))
    except RunError:
        pass
    finally:
        path.unlink()


@FUZZ
@given(raw=st.binary(max_size=300), suffix=st.sampled_from([".json", ".yaml"]))
def test_truth_random_bytes(tiny_corpus, raw, suffix):
    _load_truth(raw, suffix, tiny_corpus)


@FUZZ
@given(value=values, suffix=st.sampled_from([".json", ".yaml"]), bom=st.booleans())
def test_truth_random_values(tiny_corpus, value, suffix, bom):
    text = json.dumps(value, allow_nan=True)  # JSON is YAML too
    _load_truth((b"\xef\xbb\xbf" if bom else b"") + text.encode(), suffix, tiny_corpus)


@FUZZ
@given(data=st.data(), suffix=st.sampled_from([".json", ".yaml"]))
def test_truth_mutated_valid_file(tiny_corpus, data, suffix):
    mutated = _mutate(TINY_TRUTH, data)
    text = json.dumps(mutated, allow_nan=True)
    if data.draw(st.booleans()):  # a duplicated key, spelled in the text
        key = data.draw(st.sampled_from(KEYS))
        text = text.replace(f'"{key}":', f'"{key}": 1, "{key}":', 1)
    _load_truth(text.encode(), suffix, tiny_corpus)


@FUZZ
@given(raw=st.binary(max_size=400))
def test_run_random_bytes(tiny_truth, tiny_corpus, raw):
    _load_run(raw, tiny_truth, tiny_corpus)


hit = st.fixed_dictionaries({}, optional={k: st.one_of(values, st.integers(-5, 10**6)) for k in
                                          ("text", "doc", "start", "end", "score")})
line = st.fixed_dictionaries({}, optional={"query_id": st.one_of(st.sampled_from(["q1:course", "q2:ticket", "o1",
                                                                                   "nope"]), values),
                                           "hits": st.one_of(st.lists(hit, max_size=3), values)})


@FUZZ
@given(lines=st.lists(st.one_of(line, values), max_size=6), docs=st.lists(st.sampled_from(
    ["animals", "animals.md", "./plants.md", "/x/plants.md", "plant", "", "ANIMALS.MD"]), max_size=6))
def test_run_random_lines(tiny_truth, tiny_corpus, lines, docs):
    for obj, doc in zip(lines, docs):
        if isinstance(obj, dict) and isinstance(obj.get("hits"), list):
            for h in obj["hits"]:
                if isinstance(h, dict):
                    h["doc"] = doc
    text = "\n".join(json.dumps(o, allow_nan=True) for o in lines)
    _load_run(text.encode(), tiny_truth, tiny_corpus)
    try:
        parse_run(text.splitlines(), tiny_truth, corpus=tiny_corpus)
    except RunError:
        pass
